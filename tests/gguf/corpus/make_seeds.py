#!/usr/bin/env python3
"""Write the fuzzer's seed corpus (the *.gguf files beside this script).

The seeds are small GGUF files written by the gguf Python package (an independent
writer), so that the fuzzer starts from every structure the reader knows: each value
type, nested arrays, string arrays, tensors of plain and block types, an empty tensor,
a custom alignment, a file with nothing in it, and the real metadata of stories260K
with its tensors cut down. Run once; the outputs are committed.

    python3 make_seeds.py [PATH/TO/stories260K.gguf]
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, build, alignment=None):
    w = gguf.GGUFWriter(os.path.join(HERE, name), "llama")
    if alignment:
        w.add_custom_alignment(alignment)
    build(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def every_value(w):
    w.add_uint8("v.u8", 200)
    w.add_int8("v.i8", -100)
    w.add_uint16("v.u16", 60000)
    w.add_int16("v.i16", -30000)
    w.add_uint32("v.u32", 4000000000)
    w.add_int32("v.i32", -2000000000)
    w.add_float32("v.f32", 0.25)
    w.add_bool("v.bool", True)
    w.add_string("v.str", "héllo")
    w.add_uint64("v.u64", 2**63 + 5)
    w.add_int64("v.i64", -(2**62))
    w.add_float64("v.f64", -1.5)
    w.add_array("v.ints", [1, -2, 3])
    w.add_array("v.floats", [0.5, 1.5])
    w.add_array("v.bools", [True, False, True])
    w.add_array("v.strs", ["a", "", "ccc"])
    w.add_array("v.nested", [[1, 2], [3]])
    w.add_array("v.nested2", [[["x"], ["y", "z"]], [["w"]]])


def tensors(w):
    w.add_tensor("f32", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.add_tensor("f16", np.linspace(-1, 1, 16, dtype=np.float16).reshape(2, 8))
    w.add_tensor("i32", np.array([1, -1, 7, 9], dtype=np.int32))
    q8 = np.zeros((2, 34), dtype=np.uint8)
    q8[:, 1] = 0x3C  # scale 1.0
    q8[:, 2:] = np.arange(32, dtype=np.uint8)
    w.add_tensor("q8_0", q8, raw_dtype=Q.Q8_0)
    q4k = np.random.default_rng(1).integers(0, 256, size=(1, 144), dtype=np.uint8)
    w.add_tensor("q4_K", q4k, raw_dtype=Q.Q4_K)
    w.add_tensor("empty", np.zeros((0, 4), dtype=np.float32))


def stories(w, path):
    r = gguf.GGUFReader(path)
    for field in r.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        vtype = field.types[0]
        if vtype == V.ARRAY:
            sub = field.types[-1]
            vals = [field.contents(i) for i in range(len(field.data))]
            w.add_key_value(field.name, vals, V.ARRAY, sub_type=sub)
        else:
            w.add_key_value(field.name, field.contents(), vtype)
    for t in r.tensors[:6]:
        w.add_tensor(t.name, np.array(t.data, dtype=np.float32).reshape(-1)[:8])


def main():
    write("every-value.gguf", every_value)
    write("tensors.gguf", tensors)
    write("tensors-align64.gguf", tensors, alignment=64)
    write("values-and-tensors.gguf", lambda w: (every_value(w), tensors(w)))
    write("nothing.gguf", lambda w: None)
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "data", "models", "stories260K.gguf")
    write("stories260K-metadata.gguf", lambda w: stories(w, src))


if __name__ == "__main__":
    main()
