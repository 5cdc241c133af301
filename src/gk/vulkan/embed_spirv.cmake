# embed_spirv.cmake - cmake -DOUT=FILE.cpp -DNAMES="a;b" -DDIR=SPV_DIR -P embed_spirv.cmake
# writes a C++ source defining gk::vulkan::spirv(shader): the bytes of SPV_DIR/<name>.spv
# for each name, in the order of NAMES (the order of enum gk::vulkan::shader).
set(body "")
set(table "")
foreach(name ${NAMES})
  file(READ "${DIR}/${name}.spv" hex HEX)
  string(LENGTH "${hex}" n_hex)
  math(EXPR n_bytes "${n_hex} / 2")
  string(REPEAT "[0-9a-f]" 32 line)
  string(REGEX REPLACE "(${line})" "\\1\n    " hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "alignas(4) const unsigned char k_${name}[] = {\n    ${bytes}};\n")
  string(APPEND table "    {k_${name}, ${n_bytes}},\n")
endforeach()
file(WRITE "${OUT}.tmp"
     "// Generated from src/gk/vulkan/shaders by embed_spirv.cmake; do not edit.\n"
     "#include \"gk/vulkan/spirv.h\"\n\nnamespace gk::vulkan {\nnamespace {\n\n${body}\n"
     "const spirv_blob k_table[] = {\n${table}};\n\n} // namespace\n\n"
     "spirv_blob spirv(shader s) { return k_table[static_cast<int>(s)]; }\n\n} // namespace gk::vulkan\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
