# embed_file.cmake - cmake -DIN=FILE -DOUT=FILE.cpp -DNAME=SYMBOL -P embed_file.cmake
# writes a C++ source that defines `extern const char SYMBOL[]` (FILE's bytes and a final NUL) and
# `extern const std::size_t SYMBOL_size` (the byte count without the NUL), in namespace gk_server.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n_hex)
math(EXPR n_bytes "${n_hex} / 2")
string(REPEAT "[0-9a-f]" 32 line)  # 16 bytes a line
string(REGEX REPLACE "(${line})" "\\1\n    " hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
file(WRITE "${OUT}.tmp"
     "// Generated from ${IN} by embed_file.cmake; do not edit.\n"
     "#include <cstddef>\n\nnamespace gk_server {\n\n"
     "extern const char ${NAME}[] = {\n    ${bytes}'\\0'};\n"
     "extern const std::size_t ${NAME}_size = ${n_bytes};\n\n} // namespace gk_server\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
