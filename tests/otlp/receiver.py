"""A minimal OTLP/HTTP trace receiver for the trace test, built on the official OTLP
protobuf definitions (PyPI's opentelemetry-proto): it accepts POST /v1/traces
(application/x-protobuf), answers as a collector does, and writes every span it gets to a
file as one JSON object a line: trace_id, span_id, parent_span_id (hex), name, kind and
attributes.

Usage: python3 tests/otlp/receiver.py SPANS.jsonl   (prints "listening on PORT")"""
import http.server
import json
import sys

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        with open(sys.argv[1], "a") as out:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        out.write(json.dumps({
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": span.kind,
                            "attributes": {a.key: value(a.value) for a in span.attributes},
                        }) + "\n")
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
