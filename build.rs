use sha2::{Digest, Sha256};
use std::path::Path;

/// The engine's sources and patch list hashed into `QUICKREALM_ENGINE_BUILD`: a persistent
/// realm's state holds bytecode, which only the very engine that wrote it may read.
fn engine_build_id() -> String {
    let vendor = Path::new("vendor/rquickjs-sys");
    let mut hash = Sha256::new();
    for file in [
        "quickjs/quickjs.c",
        "quickjs/quickjs.h",
        "quickjs/quickjs-opcode.h",
    ] {
        let path = vendor.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        hash.update(file.as_bytes());
        hash.update(std::fs::read(&path).unwrap_or_default());
    }
    let patches = vendor.join("patches");
    println!("cargo:rerun-if-changed={}", patches.display());
    let mut names: Vec<String> = std::fs::read_dir(&patches)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        hash.update(name.as_bytes());
    }
    hash.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn main() {
    println!(
        "cargo:rustc-env=QUICKREALM_ENGINE_BUILD={}",
        engine_build_id()
    );
    napi_build::setup();
}
