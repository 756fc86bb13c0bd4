//! GNU extensions the C parser does not take, blanked out of the text it parses.
//!
//! System headers (`omp.h`, `immintrin.h`, glibc's) carry attributes in places the
//! parser's grammar has none (`typedef struct __attribute__((__aligned__(8))) t {`) and
//! types it does not know (`unsigned __int128`). None of them matters to the loops we
//! tune, so the parser gets a copy of the translation unit in which each is replaced by
//! text of the same length: every byte offset, and so every `file:line:col`, stays as
//! it is. The generated program is spliced into the original text, never this copy, so
//! the compiler still sees every attribute.

use crate::source::is_ident;

/// The text the parser reads: `text` with `__attribute__((...))` and `__extension__`
/// blanked and `__int128` spelled as a type of the same length.
pub fn parser_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' || c == b'\'' {
            i = skip_literal(bytes, i);
            continue;
        }
        if c == b'_' && (i == 0 || !is_ident(bytes[i - 1])) {
            let end = ident_end(bytes, i);
            match &text[i..end] {
                "__attribute__" | "__attribute" => {
                    if let Some(close) = balanced_parens(bytes, end) {
                        blank(&mut out, i, close);
                        i = close;
                        continue;
                    }
                }
                "__int128" => out[i..end].copy_from_slice(b"long    "),
                "__extension__" => blank(&mut out, i, end),
                _ => {}
            }
            i = end;
            continue;
        }
        if is_ident(c) {
            i = ident_end(bytes, i);
            continue;
        }
        i += 1;
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced by ASCII bytes")
}

/// Words that may start a file-scope declaration or stand where one starts, besides
/// type names: an identifier followed by `(` there is not a function's name.
const NOT_A_NAME: &[&str] = &[
    "asm",
    "__asm",
    "__asm__",
    "_Static_assert",
    "static_assert",
    "typedef",
    "extern",
    "static",
    "inline",
    "__inline",
    "__inline__",
    "auto",
    "register",
    "_Thread_local",
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "sizeof",
    "_Alignas",
    "_Noreturn",
    "__typeof__",
    "typeof",
    "__typeof",
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "_Bool",
    "_Complex",
    "struct",
    "union",
    "enum",
];

/// `text` with `int ` written before the name of every function declared or defined
/// with no type, as old C allows (`f(a, b) int a, b; { ... }`, implicitly `int`): the
/// parser's grammar wants a type. Only the columns of those lines move; every line
/// stays where it is, and the compiler reads the same program.
pub fn with_implicit_int(text: &str) -> String {
    let starts = implicit_int_starts(parser_text(text).as_bytes());
    if starts.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 4 * starts.len());
    let mut at = 0;
    for s in starts {
        out.push_str(&text[at..s]);
        out.push_str("int ");
        at = s;
    }
    out.push_str(&text[at..]);
    out
}

/// Whether the parameter list at `open` is a function's: a body or old-style
/// parameter declarations follow it, or `;` after a list of bare names.
fn declares_a_function(bytes: &[u8], open: usize) -> bool {
    let Some(close) = balanced_parens(bytes, open) else {
        return false;
    };
    let next = bytes[close..].iter().find(|c| !c.is_ascii_whitespace());
    match next {
        Some(b'{') => true,
        Some(c) if is_ident(*c) && !c.is_ascii_digit() => true,
        Some(b';') => bytes[open + 1..close - 1]
            .iter()
            .all(|c| is_ident(*c) || *c == b',' || c.is_ascii_whitespace()),
        _ => false,
    }
}

/// Where the name of each function declared with no type starts.
fn implicit_int_starts(bytes: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    // Nesting of (), [] and {}; whether the next token starts a declaration; whether
    // each open `{` at file scope is a function's body.
    let mut depth = 0usize;
    let mut at_start = true;
    let mut last = b';';
    let mut body = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // Directives and line markers fill their line.
        if c == b'#' && (i == 0 || bytes[i - 1] == b'\n') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            i = skip_literal(bytes, i);
            at_start = false;
            last = b'"';
            continue;
        }
        if is_ident(c) && !c.is_ascii_digit() {
            let end = ident_end(bytes, i);
            if depth == 0 && at_start {
                let word = std::str::from_utf8(&bytes[i..end]).unwrap_or("");
                let mut k = end;
                while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                    k += 1;
                }
                if bytes.get(k) == Some(&b'(')
                    && !NOT_A_NAME.contains(&word)
                    && declares_a_function(bytes, k)
                {
                    found.push(i);
                }
            }
            at_start = false;
            last = b'a';
            i = end;
            continue;
        }
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'{' => {
                if depth == 0 {
                    // A function's body follows its parameters (or, in old C, their
                    // declarations); a struct's body or an initializer does not.
                    body = matches!(last, b')' | b';');
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                // After a function's body a declaration starts; after a struct's,
                // its declarators follow.
                if depth == 0 && body {
                    at_start = true;
                    last = b'}';
                    i += 1;
                    continue;
                }
            }
            b';' if depth == 0 => {
                at_start = true;
                last = b';';
                i += 1;
                continue;
            }
            _ => {}
        }
        at_start = false;
        last = c;
        i += 1;
    }
    found
}

fn ident_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ident(bytes[i]) {
        i += 1;
    }
    i
}

/// The index after the string or character literal that starts at `i`.
fn skip_literal(bytes: &[u8], i: usize) -> usize {
    let quote = bytes[i];
    let mut k = i + 1;
    while k < bytes.len() && bytes[k] != quote && bytes[k] != b'\n' {
        k += if bytes[k] == b'\\' { 2 } else { 1 };
    }
    (k + 1).min(bytes.len())
}

/// After optional white space at `i`, a parenthesized group: the index after its
/// closing parenthesis.
fn balanced_parens(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => {
                i = skip_literal(bytes, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Spaces over `from..to`, line breaks kept.
fn blank(out: &mut [u8], from: usize, to: usize) {
    for b in &mut out[from..to] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parser_text;

    #[test]
    fn attributes_are_blanked_with_offsets_kept() {
        let src = "typedef struct __attribute__((__aligned__ (sizeof (void *)))) t\n{ int x; } t;";
        let out = parser_text(src);
        assert_eq!(out.len(), src.len());
        let attribute = "__attribute__((__aligned__ (sizeof (void *))))";
        assert_eq!(
            out,
            format!(
                "typedef struct {} t\n{{ int x; }} t;",
                " ".repeat(attribute.len())
            )
        );
    }

    #[test]
    fn int128_becomes_long_and_strings_stay() {
        let src = "unsigned __int128 r; const char *s = \"__attribute__((x))\"; int my__int128;";
        let out = parser_text(src);
        assert_eq!(
            out,
            "unsigned long     r; const char *s = \"__attribute__((x))\"; int my__int128;"
        );
    }

    #[test]
    fn functions_of_old_c_without_a_type_are_given_int() {
        let src = "# 1 \"<command-line>\"\nint layer;\nstruct s { int x; } g(void);\nrandomize(w, m)\nfloat **w;\nint m;\n{\n  w[0][0] = m;\n}\nface();\nstatic int q;row(w) float *w; { }\nsize_t (*fp)(void);\nint z = (1);\n";
        let out = super::with_implicit_int(src);
        assert_eq!(
            out,
            src.replace("\nrandomize(", "\nint randomize(")
                .replace("\nface();", "\nint face();")
                .replace("q;row(", "q;int row(")
        );
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn multi_line_attributes_keep_their_line_breaks() {
        let src = "int f(void) __attribute__((\n  nonnull(1)));\nint g;";
        let out = parser_text(src);
        // "__attribute__((" is 15 bytes, "  nonnull(1)))" 14.
        assert_eq!(
            out,
            format!(
                "int f(void) {}\n{};\nint g;",
                " ".repeat(15),
                " ".repeat(14)
            )
        );
    }
}
