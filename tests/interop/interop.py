"""Interoperability: a client in another gRPC implementation (Python grpcio, stubs
generated from proto/ at run time) plays a short game against the Rust server.

Usage: python3 tests/interop/interop.py PATH/TO/weiqi"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def generate(out):
    from grpc_tools import protoc
    proto = os.path.join(ROOT, "proto")
    rc = protoc.main(["protoc", f"-I{proto}", f"--python_out={out}", f"--grpc_python_out={out}",
                      os.path.join(proto, "weiqi", "v1", "game.proto")])
    assert rc == 0, "protoc failed"
    sys.path.insert(0, out)


def reflection(grpc, addr):
    """Server reflection in both versions: grpcio-reflection's client speaks v1alpha only;
    v1 (grpcurl's) is asked with the same messages, which are the same on the wire."""
    from grpc_reflection.v1alpha import reflection_pb2 as refl
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase)
    channel = grpc.insecure_channel(addr)
    db = ProtoReflectionDescriptorDatabase(channel)
    services = list(db.get_services())
    assert "weiqi.v1.GameService" in services, services
    assert "grpc.health.v1.Health" in services, services
    fd = db.FindFileContainingSymbol("weiqi.v1.GameService")
    assert any(s.name == "GameService" for s in fd.service), fd.name
    v1 = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=refl.ServerReflectionRequest.SerializeToString,
        response_deserializer=refl.ServerReflectionResponse.FromString)
    answers = list(v1(iter([refl.ServerReflectionRequest(list_services="")])))
    names = [s.name for s in answers[0].list_services_response.service]
    assert "weiqi.v1.GameService" in names, names


def main(binary):
    import grpc
    work = tempfile.mkdtemp(prefix="weiqi-interop-")
    generate(work)
    from weiqi.v1 import game_pb2 as pb, game_pb2_grpc as rpc

    server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--web-listen", "",
                               "--data-dir", os.path.join(work, "data")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on "), line
        addr = line.split()[-1]
        # The published service config (retries on UNAVAILABLE): grpcio refuses a config it
        # cannot parse, so this also checks the file.
        config = open(os.path.join(ROOT, "deploy", "grpc", "service-config.json")).read()
        channel = grpc.insecure_channel(addr, options=[("grpc.service_config", config),
                                                       ("grpc.enable_retries", 1)])
        stub = rpc.GameServiceStub(channel)
        settings = pb.GameSettings(board_size=5, rules="chinese", komi=0.5,
                                   color_choice=pb.COLOR_CHOICE_HOST_BLACK)
        created = stub.CreateGame(pb.CreateGameRequest(settings=settings, request_id="py-1"))
        joined = stub.JoinGame(pb.JoinGameRequest(game_id=created.game_id))
        gid = created.game_id
        black = [("authorization", "Bearer " + created.seat_token)]
        white = [("authorization", "Bearer " + joined.seat_token)]

        def mut():
            return pb.Mutation(game_id=gid)

        stub.Play(pb.PlayRequest(mutation=mut(), point=pb.Point(x=2, y=2)), metadata=black)
        stub.Play(pb.PlayRequest(mutation=mut(), point=pb.Point(x=1, y=1)), metadata=white)
        # An illegal move is FAILED_PRECONDITION.
        try:
            stub.Play(pb.PlayRequest(mutation=mut(), point=pb.Point(x=2, y=2)), metadata=black)
            raise AssertionError("occupied point accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.FAILED_PRECONDITION, e.code()
        stub.Pass(pb.PassRequest(mutation=mut()), metadata=black)
        r = stub.Pass(pb.PassRequest(mutation=mut()), metadata=white)
        assert r.result.state.phase == pb.PHASE_SCORING, r.result.state.phase
        stub.AcceptScore(pb.AcceptScoreRequest(mutation=mut()), metadata=black)
        r = stub.AcceptScore(pb.AcceptScoreRequest(mutation=mut()), metadata=white)
        st = r.result.state
        assert st.phase == pb.PHASE_FINISHED, st.phase
        assert st.result.reason == pb.END_REASON_SCORE
        assert st.result.black_points + st.result.white_points == 25.0
        sgf = stub.ExportSgf(pb.ExportSgfRequest(game_id=gid)).sgf
        assert ";B[cc]" in sgf and "RE[" in sgf, sgf
        reflection(grpc, addr)
        print(f"interop ok: {gid} {st.result.text}")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main(sys.argv[1])
