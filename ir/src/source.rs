//! Preprocessed translation units and the mapping from byte offsets back to the user's
//! files, through the `# LINE "FILE"` markers that the preprocessor writes.

use crate::error::{Error, Location, Result};
use crate::macros::Macros;
use std::path::Path;
use std::process::Command;

/// The output of `$CC -E` for one source file.
#[derive(Debug, Clone)]
pub struct Preprocessed {
    pub text: String,
    /// The file as given on the command line (the name in the line markers).
    pub file: String,
    /// Sorted start offsets of lines, with the file index and line number they map to.
    lines: Vec<LineInfo>,
    files: Vec<String>,
    /// The macros defined at the end of the unit (`$CC -dM -E`).
    macros: Macros,
    /// The user's files as lines, read once each when first asked for (`files` order;
    /// `None` when unreadable).
    sources: Vec<std::sync::OnceLock<Option<Vec<String>>>>,
}

#[derive(Debug, Clone, Copy)]
struct LineInfo {
    start: usize,
    file: u32,
    line: u32,
}

/// Runs the system preprocessor on `file` with cc-style flags (`-I`, `-D`, `-U`, `-std`, ...).
pub fn preprocess(cc: &str, file: &str, flags: &[String]) -> Result<Preprocessed> {
    if !Path::new(file).is_file() {
        return Err(Error::Missing {
            path: file.to_string(),
        });
    }
    let mut parts = cc.split_whitespace();
    let program = parts.next().unwrap_or("cc");
    let output = Command::new(program)
        .args(parts)
        .arg("-E")
        .args(flags)
        .arg(file)
        .output()
        .map_err(|e| Error::Io {
            path: program.to_string(),
            source: e,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("preprocessor failed")
            .trim()
            .to_string();
        return Err(Error::Preprocess { message: first });
    }
    let text = String::from_utf8(output.stdout).map_err(|_| Error::Preprocess {
        message: format!("{file}: preprocessed output is not UTF-8"),
    })?;
    // Old C's functions without a type get `int`: the parser's grammar wants one.
    let text = crate::frontend::gnu::with_implicit_int(&text);
    let mut pp = Preprocessed::new(file, text);
    // The macros, to print the user's names back; without them literals stay numbers.
    if let Ok(dm) = Command::new(program)
        .args(cc.split_whitespace().skip(1))
        .args(["-dM", "-E"])
        .args(flags)
        .arg(file)
        .output()
    {
        if dm.status.success() {
            pp.macros = Macros::parse(&String::from_utf8_lossy(&dm.stdout));
        }
    }
    Ok(pp)
}

impl Preprocessed {
    pub fn new(file: &str, text: String) -> Preprocessed {
        let mut files: Vec<String> = vec![file.to_string()];
        let mut lines = Vec::new();
        let mut cur_file = 0u32;
        let mut cur_line = 1u32;
        let mut offset = 0usize;
        for raw in text.split_inclusive('\n') {
            if let Some((line, name)) = parse_line_marker(raw) {
                let idx = match files.iter().position(|f| *f == name) {
                    Some(i) => i,
                    None => {
                        files.push(name);
                        files.len() - 1
                    }
                };
                cur_file = idx as u32;
                cur_line = line;
            } else {
                lines.push(LineInfo {
                    start: offset,
                    file: cur_file,
                    line: cur_line,
                });
                cur_line += 1;
            }
            offset += raw.len();
        }
        Preprocessed {
            text,
            file: file.to_string(),
            lines,
            sources: files.iter().map(|_| std::sync::OnceLock::new()).collect(),
            files,
            macros: Macros::default(),
        }
    }

    /// The line of the user's file that the preprocessed text at `offset` comes from.
    pub fn source_line(&self, offset: usize) -> Option<&str> {
        let l = self.line_at(offset)?;
        let file = l.file as usize;
        let lines = self.sources[file].get_or_init(|| {
            let text = std::fs::read_to_string(&self.files[file]).ok()?;
            Some(text.lines().map(str::to_string).collect())
        });
        lines
            .as_ref()?
            .get(l.line.checked_sub(1)? as usize)
            .map(String::as_str)
    }

    /// The macro name the user wrote where the preprocessed text has the integer
    /// literal starting at `offset` (`N` for `#define N 256`), if any.
    pub fn macro_at(&self, offset: usize) -> Option<String> {
        let l = self.line_at(offset)?;
        let line = self.source_line(offset)?;
        let end = self.line_end(l.start);
        let pp_line = self.text[l.start..end].trim_end_matches(['\n', '\r']);
        self.macros
            .literal_names(line, pp_line)
            .into_iter()
            .find(|(at, _)| l.start + at == offset)
            .map(|(_, name)| name)
    }

    fn line_at(&self, offset: usize) -> Option<&LineInfo> {
        let idx = self.lines.partition_point(|l| l.start <= offset);
        idx.checked_sub(1).map(|i| &self.lines[i])
    }

    /// The user-facing location of a byte offset.
    pub fn location(&self, offset: usize) -> Location {
        match self.line_at(offset) {
            Some(l) => {
                let col = self.text[l.start..offset.min(self.text.len())]
                    .chars()
                    .count()
                    + 1;
                Location {
                    file: self.files[l.file as usize].clone(),
                    line: l.line,
                    col: col as u32,
                }
            }
            None => Location {
                file: self.file.clone(),
                line: 1,
                col: 1,
            },
        }
    }

    /// Offset of the start of the line containing `offset`.
    pub fn line_start(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1)
    }

    /// Offset just past the end (newline included) of the line containing `offset`.
    pub fn line_end(&self, offset: usize) -> usize {
        self.text[offset.min(self.text.len())..]
            .find('\n')
            .map_or(self.text.len(), |i| offset + i + 1)
    }

    /// A line marker that makes the following line count as `loc`'s line.
    pub fn marker(loc: &Location) -> String {
        format!(
            "# {} \"{}\"\n",
            loc.line,
            loc.file.replace('\\', "\\\\").replace('"', "\\\"")
        )
    }
}

/// Parses `# 12 "file.c" 1 3` (or `#line 12 "file.c"`) into (12, "file.c").
fn parse_line_marker(raw: &str) -> Option<(u32, String)> {
    let s = raw.trim_end_matches(['\n', '\r']).trim_start();
    let rest = s.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let line: u32 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut name = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some((line, name)),
            '\\' => name.push(chars.next()?),
            c => name.push(c),
        }
    }
    None
}

/// Finds `#pragma NAME` lines (as the preprocessor passes them through); returns the
/// offset of each such line's start.
/// Every `#pragma` line of `text` within `range` other than `scop`/`endscop`:
/// (offset of the line, the line trimmed, with its whitespace runs made single spaces).
pub fn other_pragmas(text: &str, range: std::ops::Range<usize>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        if offset >= range.end {
            break;
        }
        if offset >= range.start {
            if let Some(p) = pragma_text(raw) {
                let name = p.split_whitespace().nth(1);
                if name != Some("scop") && name != Some("endscop") {
                    out.push((offset, p));
                }
            }
        }
        offset += raw.len();
    }
    out
}

/// The line as a pragma (`#pragma omp parallel for`, spaces normalized), or None.
pub fn pragma_text(line: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("pragma")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    Some(format!("#pragma {}", words.join(" ")))
}

pub fn pragma_lines(text: &str, name: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let mut words = raw.trim().trim_start_matches('#').split_whitespace();
        if raw.trim_start().starts_with('#')
            && words.next() == Some("pragma")
            && words.next() == Some(name)
            && words.next().is_none()
        {
            out.push(offset);
        }
        offset += raw.len();
    }
    out
}

/// Whether `c` may stand in a C identifier.
pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `text` takes the address of `word` (`&word`, spaces allowed between).
pub fn address_taken(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let end = at + word.len();
        let whole =
            (at == 0 || !is_ident(bytes[at - 1])) && (end == bytes.len() || !is_ident(bytes[end]));
        whole && text[..at].trim_end().ends_with('&') && !text[..at].trim_end().ends_with("&&")
    })
}

/// Whether `text` names `word` as a whole identifier (not inside a longer one).
pub fn mentions_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let end = at + word.len();
        (at == 0 || !is_ident(bytes[at - 1])) && (end == bytes.len() || !is_ident(bytes[end]))
    })
}

/// The variables a statement without calls stores to by name: assigned (`x = `,
/// `x += `, ...), incremented or decremented, or whose address it takes; None where it
/// calls a function or stores through a subscript or a pointer (`a[i] = `, `*p = `),
/// which only the names it mentions can bound.
pub fn stores_by_name(text: &str) -> Option<Vec<String>> {
    let (names, elsewhere) = assigned_names(text);
    (!elsewhere).then_some(names)
}

/// A piece of code outside string and character literals: an identifier (its byte
/// range) or any other byte (its offset).
pub enum Code {
    Ident(std::ops::Range<usize>),
    Other(usize),
}

/// The code of `text`, string and character literals left out.
pub fn code(text: &str) -> Vec<Code> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            out.push(Code::Ident(start..i));
            continue;
        }
        out.push(Code::Other(i));
        i += 1;
    }
    out
}

/// Whether `rest` starts with an assignment (`=`, `+=`, ...) or `++`/`--`.
fn assigns(rest: &str) -> bool {
    const ASSIGN: [&str; 13] = [
        "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--",
    ];
    let rest = rest.trim_start();
    ASSIGN.iter().any(|op| rest.starts_with(op)) && !rest.starts_with("==")
}

/// Whether the identifier at `at` in `text` is stored to by name: assigned,
/// incremented or decremented, or its address taken.
pub fn stored_by_name(text: &str, at: std::ops::Range<usize>) -> bool {
    let before = text[..at.start].trim_end();
    assigns(&text[at.end..])
        || before.ends_with("++")
        || before.ends_with("--")
        || (before.ends_with('&') && !before.ends_with("&&"))
}

/// Whether the identifier at `at` in `text` is a function called there (`f(`, not
/// `sizeof(`, `if (`, `while (`...).
pub fn called_at(text: &str, at: std::ops::Range<usize>) -> bool {
    const NOT_CALLS: [&str; 7] = ["sizeof", "if", "while", "for", "switch", "return", "do"];
    text[at.end..].trim_start().starts_with('(') && !NOT_CALLS.contains(&&text[at])
}

/// The variables `text` assigns by name, increments, decrements or takes the address
/// of (the only ways a scalar local changes), and whether it also calls a function or
/// stores through a subscript or a pointer.
pub fn assigned_names(text: &str) -> (Vec<String>, bool) {
    let mut out: Vec<String> = Vec::new();
    let mut elsewhere = false;
    for piece in code(text) {
        match piece {
            // A store through a subscript or a pointer.
            Code::Other(i) if text.as_bytes()[i] == b']' => {
                elsewhere |= assigns(&text[i + 1..]);
            }
            Code::Other(i) if text.as_bytes()[i] == b'*' => {
                let before = text[..i].trim_end();
                let unary = before.is_empty() || before.ends_with([';', '{', '}', '(', ',', '=']);
                let rest = text[i + 1..].trim_start();
                let name_len = rest.bytes().take_while(|x| is_ident(*x)).count();
                elsewhere |= unary && name_len > 0 && assigns(&rest[name_len..]);
            }
            Code::Other(_) => {}
            Code::Ident(r) => {
                let name = &text[r.clone()];
                let before = text[..r.start].trim_end();
                if called_at(text, r.clone()) {
                    elsewhere = true;
                } else if !(before.ends_with('.') || before.ends_with("->"))
                    && stored_by_name(text, r)
                    && !out.iter().any(|n| n == name)
                {
                    out.push(name.to_string());
                }
            }
        }
    }
    (out, elsewhere)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_by_name_reads_what_a_statement_assigns() {
        let names = |t: &str| stores_by_name(t);
        assert_eq!(names("float *src = in;"), Some(vec!["src".to_string()]));
        assert_eq!(
            names("float *t = src; src = dst; dst = t; count++;"),
            Some(vec!["t".into(), "src".into(), "dst".into(), "count".into()])
        );
        assert_eq!(names("x == y ? a : b;"), Some(vec![]));
        assert_eq!(names("int n = sizeof(v) / 4;"), Some(vec!["n".to_string()]));
        assert_eq!(names("g(&k);"), None);
        assert_eq!(names("a[i] = 0;"), None);
        assert_eq!(names("*p += 1;"), None);
        assert_eq!(names("s.n = 1;"), Some(vec![]));
        assert_eq!(
            names("q = &r;"),
            Some(vec!["q".to_string(), "r".to_string()])
        );
    }

    #[test]
    fn maps_offsets_through_line_markers() {
        let text = "# 1 \"a.c\"\nint x;\n# 1 \"inc.h\" 1\nint y;\n# 3 \"a.c\" 2\n  int z;\n";
        let pp = Preprocessed::new("a.c", text.to_string());
        let z = text.find("int z").unwrap();
        let loc = pp.location(z);
        assert_eq!((loc.file.as_str(), loc.line, loc.col), ("a.c", 3, 3));
        let y = text.find("int y").unwrap();
        assert_eq!(pp.location(y).file, "inc.h");
        assert_eq!(pp.location(text.find("int x").unwrap()).line, 1);
    }

    #[test]
    fn finds_pragma_lines() {
        let text = "a\n#pragma scop\nb\n  # pragma  endscop\n#pragma scopx\n";
        assert_eq!(pragma_lines(text, "scop"), vec![2]);
        assert_eq!(pragma_lines(text, "endscop"), vec![17]);
    }

    #[test]
    fn finds_whole_words() {
        assert!(mentions_word("  A[0][0] = w;\n}", "w"));
        assert!(mentions_word("w", "w"));
        assert!(!mentions_word("  wx = w_2 + aw;", "w"));
        assert!(!mentions_word("", "w"));
        assert!(address_taken("double w, *p = & w;", "w"));
        assert!(!address_taken("x = a && w;", "w"));
        assert!(!address_taken("x = a & wz;", "w"));
    }
}
