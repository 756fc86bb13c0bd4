//! GNU extensions the C parser does not take, blanked out of the text it parses.
//!
//! System headers (`omp.h`, `immintrin.h`, glibc's) carry attributes in places the
//! parser's grammar has none (`typedef struct __attribute__((__aligned__(8))) t {`) and
//! types it does not know (`unsigned __int128`). None of them matters to the loops we
//! tune, so the parser gets a copy of the translation unit in which each is replaced by
//! text of the same length: every byte offset, and so every `file:line:col`, stays as
//! it is. The generated program is spliced into the original text, never this copy, so
//! the compiler still sees every attribute.

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

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
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
