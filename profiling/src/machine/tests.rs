use super::bench::*;
use super::render::*;
use super::system::*;
use super::*;
use std::path::PathBuf;

#[test]
fn sysfs_describes_a_data_cache_here() {
    let sys = SysPaths::linux();
    if !sys.cpu.join("online").exists() {
        return; // not Linux
    }
    let st = read_static(&sys);
    assert!(st.threads >= 1 && st.cores >= 1 && st.sockets >= 1);
    let real = read_caches(&sys.cpu, 0);
    assert!(
        data_caches(&real).next().is_some(),
        "no data cache in sysfs: {real:?}"
    );
    assert!(data_caches(&real).all(|c| c.size_bytes >= 1024 && c.line_bytes > 0));
}

#[test]
fn parses_sizes_lists_and_cpuinfo() {
    assert_eq!(parse_size("32K\n"), Some(32 * 1024));
    assert_eq!(parse_size("32768K"), Some(32 * MIB));
    assert_eq!(parse_size("1M"), Some(MIB));
    assert_eq!(parse_size("512"), Some(512));
    assert_eq!(parse_size("x"), None);
    assert_eq!(
        parse_cpu_list("0-3,8,10-11\n"),
        Some(vec![0, 1, 2, 3, 8, 10, 11])
    );
    assert_eq!(parse_cpu_list("0"), Some(vec![0]));
    assert_eq!(parse_cpu_list("3-1"), None);
    let (model, flags) =
        parse_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\n");
    assert_eq!(model, "AMD EPYC");
    assert_eq!(flags, ["fpu", "avx2", "fma"]);
    assert_eq!(utc_date(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(utc_date(951_782_400), "2000-02-29 00:00:00 UTC");
    assert_eq!(utc_date(1_700_000_000), "2023-11-14 22:13:20 UTC");
}

fn fake_sys(root: &Path, with_caches: bool) -> SysPaths {
    let cpu = root.join("cpu");
    for c in 0..4u32 {
        let topo = cpu.join(format!("cpu{c}/topology"));
        std::fs::create_dir_all(&topo).unwrap();
        std::fs::write(topo.join("physical_package_id"), "0\n").unwrap();
        std::fs::write(topo.join("core_id"), format!("{}\n", c / 2)).unwrap();
    }
    std::fs::write(cpu.join("online"), "0-3\n").unwrap();
    if with_caches {
        for (i, (level, kind, size, shared)) in [
            (1, "Data", "48K", "0,2"),
            (1, "Instruction", "32K", "0,2"),
            (2, "Unified", "2048K", "0,2"),
            (3, "Unified", "8M", "0-1"),
        ]
        .into_iter()
        .enumerate()
        {
            let d = cpu.join(format!("cpu0/cache/index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
            std::fs::write(d.join("coherency_line_size"), "64\n").unwrap();
            std::fs::write(d.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
        }
    }
    std::fs::write(
        root.join("cpuinfo"),
        "model name\t: Test CPU\nflags\t\t: sse2 avx2 fma avx512f\n",
    )
    .unwrap();
    std::fs::write(root.join("hostname"), "box/1\n").unwrap();
    SysPaths {
        cpu,
        cpuinfo: root.join("cpuinfo"),
        meminfo: root.join("meminfo"),
        hostname: vec![root.join("hostname")],
    }
}

#[test]
fn fake_sysfs_topology_and_caches() {
    let tmp = tempfile::tempdir().unwrap();
    let st = read_static(&fake_sys(tmp.path(), true));
    assert_eq!((st.threads, st.cores, st.sockets), (4, 2, 1));
    assert_eq!(st.host, "box_1");
    assert_eq!(st.cpu_model, "Test CPU");
    assert_eq!(st.flags, ["avx2", "fma", "avx512f"]);
    // (this host may have fewer than the 4 fake CPUs, which adds an affinity note)
    assert!(
        st.notes.iter().all(|n| n.contains("this process may use")),
        "{:?}",
        st.notes
    );
    assert_eq!(st.caches.len(), 4);
    assert_eq!(st.caches[0].kind, CacheKind::Data);
    assert_eq!(st.caches[1].kind, CacheKind::Instruction);
    assert_eq!(st.caches[0].shared_by_cpus, 2);
    // 8 MiB shared by 2 of 4 CPUs: two instances.
    assert_eq!(llc_total(&st.caches, st.threads), 16 * MIB);
    let mut notes = vec![];
    assert_eq!(array_size(&st, None, &mut notes), 64 * MIB);
    assert_eq!(array_size(&st, Some(5 * MIB), &mut notes), 5 * MIB);
}

#[test]
fn missing_caches_fall_back_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let st = read_static(&fake_sys(tmp.path(), false));
    assert!(st.notes.iter().any(|n| n.contains("assuming L1d 32 KiB")));
    let sizes: Vec<u64> = data_caches(&st.caches).map(|c| c.size_bytes).collect();
    assert_eq!(sizes, [32 * KIB, MIB, 32 * MIB]);
}

#[test]
fn output_parsing_rejects_missing_numbers() {
    let good = r#"{"threads": 1, "array_bytes": 4194304, "repetitions": 2, "convention": "x",
        "bandwidth": {"load": 10, "store": 5, "copy": 8, "triad": 9},
        "peak": {"scalar": 4, "avx2_fma": 30, "avx512_fma": null}, "checksum": 1}"#;
    let r = parse_output(good).unwrap();
    assert_eq!(r.peak.avx512_fma, None);
    assert_eq!(r.peak.avx2_fma, Some(30.0));
    let bad = good.replace("\"triad\": 9", "\"triad\": null");
    assert!(parse_output(&bad).is_err());
    assert!(parse_output("garbage").is_err());
}

fn check_sane(b: &Bandwidth, p: &Peak) {
    for v in [b.load, b.store, b.copy, b.triad, p.scalar] {
        assert!(v.is_finite() && v > 0.0, "{b:?} {p:?}");
    }
    for v in [p.avx2_fma, p.avx512_fma].into_iter().flatten() {
        assert!(v.is_finite() && v > 0.0, "{p:?}");
    }
}

/// Builds and runs the real benchmark with tiny arrays and short peak runs.
#[test]
fn benchmark_smoke() {
    let tmp = tempfile::tempdir().unwrap();
    let tc = Toolchain::default();
    let compiler = tc.version().unwrap();
    let exe = build_bench(&tc, &compiler, &tmp.path().join("build")).unwrap();
    let r = run_bench(&exe, 4 * MIB, 2, 1, 0.02).unwrap();
    assert_eq!(r.array_bytes, 4 * MIB);
    check_sane(&r.bandwidth, &r.peak);
    // a second build is a cache hit
    assert_eq!(
        build_bench(&tc, &compiler, &tmp.path().join("build")).unwrap(),
        exe
    );
}

/// The whole path with tiny settings: measure, reuse, survive a damaged cache file.
#[test]
fn caches_and_remeasures_damaged_files() {
    let tmp = tempfile::tempdir().unwrap();
    let tc = Toolchain::default();
    let sys = SysPaths::linux();
    let opts = MachineOptions {
        refresh: false,
        array_bytes: Some(2 * MIB),
        repetitions: 2,
    };
    let first = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
    check_sane(&first.bandwidth_1, &first.peak_1);
    check_sane(&first.bandwidth_all, &first.peak_all);
    assert_eq!(first.array_bytes, 2 * MIB);
    assert!(first.best_peak_1() >= first.peak_1.scalar);
    assert!(!first.data_cache_sizes().is_empty());
    assert!(first.llc_bytes() > 0);
    let text = render(&first);
    assert!(
        text.contains("triad") && text.contains(&first.host),
        "{text}"
    );

    let files: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("machine"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(name.starts_with(&format!("{}-", first.host)), "{name}");

    // reused: identical, including the time stamp
    let again = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
    assert_eq!(again, first);

    // As a build for AVX2 sees a CPU with AVX-512: its flags and peak, with a note;
    // a build for all of them sees it as it is.
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut wide = first.clone();
    wide.flags = s(&["avx2", "fma", "avx512f"]);
    wide.peak_1 = Peak {
        scalar: 8.0,
        avx2_fma: Some(32.0),
        avx512_fma: Some(64.0),
    };
    assert_eq!(wide.clone().targeted(&s(&["fma", "avx512f", "avx2"])), wide);
    let v3 = wide.clone().targeted(&s(&["avx2", "fma"]));
    assert_eq!(v3.flags, s(&["avx2", "fma"]));
    assert_eq!((v3.best_peak_1(), v3.peak_1.avx512_fma), (32.0, None));
    assert!(
        v3.notes.last().unwrap().contains("avx512f"),
        "{:?}",
        v3.notes
    );
    let sse = wide.targeted(&[]);
    assert!(sse.flags.is_empty());
    assert_eq!(sse.best_peak_1(), 8.0);

    // a damaged file is measured again and rewritten
    std::fs::write(&files[0], "{\"host\": 1").unwrap();
    let fresh = machine_with(tmp.path(), &tc, &opts, &sys, 0.01).unwrap();
    check_sane(&fresh.bandwidth_1, &fresh.peak_1);
    assert!(load_cached(&files[0]).is_some());

    // a different array size is not served from the cache
    let bigger = MachineOptions {
        array_bytes: Some(3 * MIB),
        ..opts
    };
    assert_eq!(
        machine_with(tmp.path(), &tc, &bigger, &sys, 0.01)
            .unwrap()
            .array_bytes,
        3 * MIB
    );
}
