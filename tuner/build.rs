//! Puts libtorch's library folder on the `tune` binary's run path, so the binary runs
//! without LD_LIBRARY_PATH. The folder is found as the `torch-sys` build finds it:
//! `$LIBTORCH/lib`, or with LIBTORCH_USE_PYTORCH=1 the `torch` package of `python`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-env-changed=LIBTORCH_USE_PYTORCH");
    let lib = if let Some(dir) = std::env::var_os("LIBTORCH") {
        Some(PathBuf::from(dir).join("lib"))
    } else if std::env::var_os("LIBTORCH_USE_PYTORCH").is_some() {
        Command::new("python")
            .args([
                "-c",
                "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))",
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    } else {
        None
    };
    if let Some(lib) = lib {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
}
