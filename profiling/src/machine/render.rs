//! The machine description as text for the terminal.

use super::{CacheKind, MachineInfo, KIB, MIB};

/// A readable multi-line description for the terminal.
pub fn render(m: &MachineInfo) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "host      {}", m.host);
    let _ = writeln!(
        s,
        "cpu       {} ({} socket{}, {} core{}, {} thread{})",
        m.cpu_model,
        m.sockets,
        plural(m.sockets),
        m.cores,
        plural(m.cores),
        m.threads,
        plural(m.threads)
    );
    let flags = if m.flags.is_empty() {
        "-".to_string()
    } else {
        m.flags.join(" ")
    };
    let _ = writeln!(s, "flags     {flags}");
    let _ = writeln!(s, "compiler  {}", m.compiler);
    let _ = writeln!(s, "caches");
    for c in &m.caches {
        let suffix = match c.kind {
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
            CacheKind::Unified => "",
        };
        let _ = writeln!(
            s,
            "  L{}{:<2} {:>10}  line {:>3} B  shared by {} cpu{}",
            c.level,
            suffix,
            human_bytes(c.size_bytes),
            c.line_bytes,
            c.shared_by_cpus,
            plural(c.shared_by_cpus)
        );
    }
    let all = format!("{} threads", m.threads);
    let _ = writeln!(s);
    let _ = writeln!(s, "{:<20}{:>12}{:>12}", "", "1 thread", all);
    let row = |s: &mut String, name: &str, a: Option<f64>, b: Option<f64>| {
        let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
        let (what, unit) = name.rsplit_once(' ').unwrap_or((name, ""));
        let _ = writeln!(s, "{:<12}{:<8}{:>12}{:>12}", what, unit, f(a), f(b));
    };
    let (b1, ba) = (&m.bandwidth_1, &m.bandwidth_all);
    row(&mut s, "load GB/s", Some(b1.load), Some(ba.load));
    row(&mut s, "store GB/s", Some(b1.store), Some(ba.store));
    row(&mut s, "copy GB/s", Some(b1.copy), Some(ba.copy));
    row(&mut s, "triad GB/s", Some(b1.triad), Some(ba.triad));
    for c in &m.cache_bandwidth_1 {
        let all = m.cache_bandwidth_all.iter().find(|x| x.level == c.level);
        let name = format!("L{}", c.level);
        row(
            &mut s,
            &format!("{name} load GB/s"),
            Some(c.load),
            all.map(|x| x.load),
        );
        row(
            &mut s,
            &format!("{name} triad GB/s"),
            Some(c.triad),
            all.map(|x| x.triad),
        );
        row(
            &mut s,
            &format!("{name} update GB/s"),
            Some(c.update),
            all.map(|x| x.update),
        );
    }
    let (p1, pa) = (&m.peak_1, &m.peak_all);
    row(&mut s, "scalar GFLOP/s", Some(p1.scalar), Some(pa.scalar));
    row(&mut s, "avx2 fma GFLOP/s", p1.avx2_fma, pa.avx2_fma);
    row(&mut s, "avx512 fma GFLOP/s", p1.avx512_fma, pa.avx512_fma);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "bandwidth: 3 arrays of {}, STREAM byte counting (load 8, store 8, copy 16, \
         triad 24 bytes per element; no write-allocate), best of repetitions",
        human_bytes(m.array_bytes)
    );
    if !m.cache_bandwidth_1.is_empty() {
        let _ = writeln!(
            s,
            "cache levels: arrays of half the level's capacity per thread, kernels repeated \
             over them in one parallel region (update: a[i] = s*a[i] + t, 16 bytes per \
             element), best of three rounds of repetitions (the roofs of `tune profile` and \
             `tune apply`: the fastest kernel)"
        );
    }
    let _ = writeln!(s, "peak: 2 flops per FMA per lane, best of repetitions");
    let _ = writeln!(s, "measured {}", utc_date(m.measured_at_unix));
    for n in &m.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(super) fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 && b.trailing_zeros() >= 30 {
        format!("{} GiB", b >> 30)
    } else if b >= MIB && b.trailing_zeros() >= 20 {
        format!("{} MiB", b >> 20)
    } else if b >= KIB && b.trailing_zeros() >= 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` from Unix seconds (proleptic Gregorian calendar).
pub(super) fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a year; 146097 days
    // make a 400-year era.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}
