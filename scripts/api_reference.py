"""The API reference (docs/api.md) from the proto files' own comments.

Usage: buf build --as-file-descriptor-set -o - | python3 scripts/api_reference.py > docs/api.md

Reads a FileDescriptorSet with source info (buf's default) on standard input and writes
Markdown: each service's calls, then each message's fields and each enum's values, with
the comments written above them in the .proto files. CI regenerates it and fails when the
committed file differs, so the reference never drifts from the proto."""
import sys

from google.protobuf import descriptor_pb2

# FieldDescriptorProto.Type -> the proto spelling.
SCALARS = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32",
    8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32", 16: "sfixed64",
    17: "sint32", 18: "sint64",
}


def comments(file):
    """Leading comments by source path (a tuple of field numbers and indexes)."""
    out = {}
    for loc in file.source_code_info.location:
        text = loc.leading_comments.strip()
        if text:
            out[tuple(loc.path)] = " ".join(line.strip() for line in text.splitlines())
    return out


def short(type_name, package):
    name = type_name.lstrip(".")
    return name[len(package) + 1:] if name.startswith(package + ".") else name


def field_type(f, package, maps):
    if f.type_name:
        t = short(f.type_name, package)
        if t in maps:
            return maps[t]
        t = f"[{t}](#{t.lower().replace('.', '')})"
    else:
        t = SCALARS[f.type]
    if f.label == 3:
        return f"repeated {t}"
    if f.proto3_optional:
        return f"optional {t}"
    return t


def cell(text):
    return text.replace("|", "\\|")


def messages(msgs, path, prefix, package, notes, out):
    for i, m in enumerate(msgs):
        p = path + (i,)
        name = prefix + m.name
        maps = {}
        for j, nested in enumerate(m.nested_type):
            if nested.options.map_entry:
                k, v = nested.field
                key = f"{name}.{nested.name}"
                maps[key] = f"map<{field_type(k, package, {})}, {field_type(v, package, {})}>"
        out.append(f"### {name}\n")
        if notes.get(p):
            out.append(notes[p] + "\n")
        if m.field:
            out.append("| field | number | type | |")
            out.append("|---|---|---|---|")
            for j, f in enumerate(m.field):
                note = notes.get(p + (2, j), "")
                out.append(f"| `{f.name}` | {f.number} | {field_type(f, package, maps)} | {cell(note)} |")
            out.append("")
        enums(m.enum_type, p + (4,), name + ".", notes, out)
        messages([n for n in m.nested_type if not n.options.map_entry], p + (3,), name + ".", package, notes, out)


def enums(items, path, prefix, notes, out):
    for i, e in enumerate(items):
        p = path + (i,)
        out.append(f"### {prefix}{e.name}\n")
        if notes.get(p):
            out.append(notes[p] + "\n")
        out.append("| value | number | |")
        out.append("|---|---|---|")
        for j, v in enumerate(e.value):
            out.append(f"| `{v.name}` | {v.number} | {cell(notes.get(p + (2, j), ''))} |")
        out.append("")


def main():
    fds = descriptor_pb2.FileDescriptorSet.FromString(sys.stdin.buffer.read())
    ours = [f for f in fds.file if f.package.startswith("weiqi.")]
    out = [
        "# The weiqi API (`weiqi.v1`)",
        "",
        "Generated from the comments in `proto/` by `scripts/api_reference.py` (see its",
        "header); do not edit by hand. What may change within v1:",
        "[api-compatibility.md](api-compatibility.md).",
        "",
    ]
    for f in sorted(ours, key=lambda f: f.name):
        notes = comments(f)
        out.append(f"## {f.name}\n")
        for i, s in enumerate(f.service):
            out.append(f"### service {s.name}\n")
            if notes.get((6, i)):
                out.append(notes[(6, i)] + "\n")
            out.append("| call | request | response | |")
            out.append("|---|---|---|---|")
            for j, m in enumerate(s.method):
                stream = "stream " if m.server_streaming else ""
                req = short(m.input_type, f.package)
                resp = short(m.output_type, f.package)
                out.append(f"| `{m.name}` | {req} | {stream}{resp} | {cell(notes.get((6, i, 2, j), ''))} |")
            out.append("")
        enums(f.enum_type, (5,), "", notes, out)
        messages(f.message_type, (4,), "", f.package, notes, out)
    sys.stdout.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
