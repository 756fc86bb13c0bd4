//! The checked-in verdict table (`datasets/verdicts/*.txt`) holds for every program.

use datasets::{verdict_table, Preset, Suite};

#[test]
fn every_program_gets_its_expected_loop_verdicts() {
    let suite = Suite::core().unwrap();
    let mut failures = Vec::new();
    for p in &suite.programs {
        let opts = ir::FrontendOptions {
            flags: vec![Preset::Mini.flag()],
            ..Default::default()
        };
        let parsed = ir::load(&suite.path_of(p).display().to_string(), &opts).unwrap();
        assert!(
            ir::verify::verify(&parsed.program).is_empty(),
            "{} fails verification",
            p.name
        );
        let got = verdict_table(&parsed.program);
        let want = suite.expected_verdicts(p).unwrap();
        if got != want {
            failures.push(format!(
                "{}:\n--- expected\n{want}--- analysis\n{got}",
                p.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gemm_verdicts_spelled_out() {
    let suite = Suite::core().unwrap();
    let gemm = suite.program("gemm").unwrap();
    let opts = ir::FrontendOptions {
        flags: vec![Preset::Mini.flag()],
        ..Default::default()
    };
    let parsed = ir::load(&suite.path_of(gemm).display().to_string(), &opts).unwrap();
    assert_eq!(
        verdict_table(&parsed.program),
        "i parallel\n  j parallel\n  k reduction\n    j parallel\n"
    );
}
