//! Output for people: one module per command's tables. Output for programs (`--json`)
//! is the serialized report, never these.

pub mod apply;
pub mod batch;
pub mod eval;
pub mod profile;
pub mod run;
pub mod search;

/// Prints `value` as pretty JSON, or as `text` renders it for people.
pub fn print<T: serde::Serialize + ?Sized>(json: bool, value: &T, text: impl Fn(&T) -> String) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).expect("reports serialize")
        );
    } else {
        print!("{}", text(value));
    }
}

/// Width of a table's name column: the longest name and one space, at least `min`
/// (loop-order variants' names, `gemm@nest0-b2-10`, are longer than most).
pub fn name_width<'a>(names: impl Iterator<Item = &'a str>, min: usize) -> usize {
    names.map(|n| n.len() + 1).max().unwrap_or(0).max(min)
}
