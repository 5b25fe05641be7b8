//! Generates the weiqi.v1 client and server from `proto/` with a vendored protoc.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // tonic-prost-build finds protoc through PROTOC; use the vendored one.
    unsafe_set_protoc(&protoc);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out.join("weiqi_descriptor.bin"))
        .compile_protos(
            &[
                root.join("weiqi/v1/game.proto"),
                root.join("weiqi/v1/player.proto"),
                root.join("weiqi/v1/tournament.proto"),
            ],
            std::slice::from_ref(&root),
        )?;
    println!("cargo:rerun-if-changed={}", root.display());
    Ok(())
}

fn unsafe_set_protoc(path: &std::path::Path) {
    // `set_var` is unsafe in edition 2024 only because other threads may read the
    // environment; a build script has none.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PROTOC", path);
    }
}
