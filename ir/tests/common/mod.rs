//! Helpers shared by the integration tests.

/// The names of the core suite's programs (`datasets/programs/*.c`), sorted.
pub fn dataset_names() -> Vec<String> {
    let dir = format!("{}/../datasets/programs", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "c").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}
