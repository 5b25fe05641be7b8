//! With the `tch` feature, embed libtorch's folder as the rpath of this package's binaries
//! and tests, so they run without LD_LIBRARY_PATH.
fn main() {
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
