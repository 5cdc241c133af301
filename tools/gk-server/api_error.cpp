// api_error.cpp - see api_error.h.
#include "api_error.h"

#include <nlohmann/json.hpp>

namespace gk_server {

const char * error_type(int status) {
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 501: return "not_supported_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

std::string error_body(int status, const std::string & message) {
    const nlohmann::json j = {{"error", {{"message", message}, {"type", error_type(status)}, {"code", status}}}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace gk_server
