// api_error.h - errors as OpenAI's API writes them: a status and the body
// {"error": {"message": ..., "type": ..., "code": STATUS}}.
#pragma once

#include <string>

namespace gk_server {

/** An error to answer a request with. */
struct api_error {
    int         status = 400;
    std::string message;
};

/** OpenAI's error type for an HTTP status ("invalid_request_error", "authentication_error",
 *  "not_found_error", "server_error", ...). */
const char * error_type(int status);

/** The JSON body of an error. */
std::string error_body(int status, const std::string & message);

} // namespace gk_server
