//! Any text, taken as a preprocessed translation unit, must never panic the frontend,
//! the dependence analysis or code generation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let pp = ir::source::Preprocessed::new("fuzz.c", text.to_string());
    if let Ok(mut parsed) = ir::frontend::parse_preprocessed(pp, None) {
        ir::deps::annotate(&mut parsed.program);
        let _ = ir::verify::verify(&parsed.program);
        let _ = ir::codegen::generate(&parsed, ir::codegen::CodegenOptions { openmp: true, instrument: true });
    }
});
