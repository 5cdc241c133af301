# cmake -DDIR=<kernel folder> -DOUT=<file.cpp> -P embed_pmath.cmake: writes OUT, the text of
# DIR/pmath.c and DIR/pmath.h as byte arrays behind kernel/c_print.h's pmath_c_text() and
# pmath_h_text() (the cc backend and presk export compile them with the system compiler).
set(body "// Generated from pmath.c and pmath.h by kernel/embed_pmath.cmake: do not edit.\n#include \"kernel/c_print.h\"\n\nnamespace presk::kernel {\nnamespace {\n")
foreach(name c h)
  file(READ ${DIR}/pmath.${name} bytes HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${bytes}")
  string(REPEAT "0x..," 32 row)
  string(REGEX REPLACE "(${row})" "\\1\n" bytes "${bytes}")
  string(APPEND body "const unsigned char pmath_${name}[] = {\n${bytes}};\n")
endforeach()
string(APPEND body "} // namespace\n\n")
foreach(name c h)
  string(APPEND body "std::string_view pmath_${name}_text() { return {reinterpret_cast<const char*>(pmath_${name}), sizeof pmath_${name}}; }\n")
endforeach()
string(APPEND body "\n} // namespace presk::kernel\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
