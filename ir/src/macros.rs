//! The user's object-like macros (`#define N 256`), to find which integer literals of the
//! preprocessed text were spelled as a macro name in the source.
//!
//! A source line and its preprocessed line are compared token by token: the source line
//! with its object-like macros expanded (as `$CC -dM -E` defines them) must give exactly
//! the preprocessed tokens, and a literal that came from a macro whose whole expansion is
//! that literal (parentheses aside) takes the macro's name. Anything else (a function-like
//! macro on the line, a comment across lines, a mismatch) gives no names: the literal
//! keeps its number, which is always correct.

use std::collections::{HashMap, HashSet};

/// Object-like macro bodies by name, and the names of function-like macros.
#[derive(Debug, Clone, Default)]
pub struct Macros {
    objects: HashMap<String, String>,
    functions: HashSet<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    /// Byte offset in its line.
    at: usize,
    text: String,
}

impl Macros {
    /// Reads the output of `$CC -dM -E`: one `#define NAME BODY` or
    /// `#define NAME(ARGS) BODY` per line.
    pub fn parse(dm: &str) -> Macros {
        let mut m = Macros::default();
        for line in dm.lines() {
            let Some(rest) = line.trim_start().strip_prefix("#define ") else {
                continue;
            };
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, body) = rest.split_at(name_len);
            if name.is_empty() {
                continue;
            }
            if body.starts_with('(') {
                m.functions.insert(name.to_string());
            } else {
                m.objects.insert(name.to_string(), body.trim().to_string());
            }
        }
        m
    }

    /// For `source` (a line as the user wrote it) and `preprocessed` (the same line after
    /// preprocessing), the byte offsets in `preprocessed` of integer literals that the
    /// user spelled as a macro name, with that name.
    pub fn literal_names(&self, source: &str, preprocessed: &str) -> Vec<(usize, String)> {
        let (Some(src), Some(pp)) = (tokens(source), tokens(preprocessed)) else {
            return Vec::new();
        };
        // (expanded token text, the user's macro it came from, whether that macro's
        // whole expansion is one literal)
        let mut expanded: Vec<(String, Option<(String, bool)>)> = Vec::new();
        for (k, t) in src.iter().enumerate() {
            if self.functions.contains(&t.text) && src.get(k + 1).is_some_and(|n| n.text == "(") {
                return Vec::new();
            }
            if !self.objects.contains_key(&t.text) {
                expanded.push((t.text.clone(), None));
                continue;
            }
            let mut active = vec![t.text.clone()];
            let Some(body) = self.expand(&t.text, &mut active) else {
                return Vec::new();
            };
            let inner: Vec<&String> = {
                let mut s: &[String] = &body;
                while s.len() >= 2 && s[0] == "(" && s[s.len() - 1] == ")" {
                    s = &s[1..s.len() - 1];
                }
                s.iter().collect()
            };
            let single = inner.len() == 1 && is_number(inner[0]);
            for b in &body {
                expanded.push((b.clone(), Some((t.text.clone(), single))));
            }
        }
        if expanded.len() != pp.len() || expanded.iter().zip(&pp).any(|(e, p)| e.0 != p.text) {
            return Vec::new();
        }
        expanded
            .into_iter()
            .zip(pp)
            .filter_map(|((text, from), p)| match from {
                Some((name, true)) if is_number(&text) => Some((p.at, name)),
                _ => None,
            })
            .collect()
    }

    /// The tokens `name` expands to (object-like macros only, recursively).
    fn expand(&self, name: &str, active: &mut Vec<String>) -> Option<Vec<String>> {
        let body = tokens(self.objects.get(name)?)?;
        let mut out = Vec::new();
        for t in body {
            if self.functions.contains(&t.text) {
                return None;
            }
            if self.objects.contains_key(&t.text) && !active.contains(&t.text) && active.len() < 32
            {
                active.push(t.text.clone());
                out.extend(self.expand(&t.text, active)?);
                active.pop();
            } else {
                out.push(t.text);
            }
        }
        Some(out)
    }
}

fn is_number(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_digit())
}

/// The tokens of one line: identifiers, preprocessing numbers, string and character
/// literals, and every other character alone. None when the line holds something a
/// single line cannot be compared by (an unterminated comment or literal).
fn tokens(line: &str) -> Option<Vec<Token>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while k < b.len() {
        let c = b[k];
        let start = k;
        if c.is_ascii_whitespace() {
            k += 1;
            continue;
        }
        if line[k..].starts_with("//") {
            break;
        }
        if line[k..].starts_with("/*") {
            k += 2 + line[k + 2..].find("*/")? + 2;
            continue;
        }
        if word(c) && !c.is_ascii_digit() {
            while k < b.len() && word(b[k]) {
                k += 1;
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(k + 1).is_some_and(u8::is_ascii_digit))
        {
            while k < b.len() {
                let d = b[k];
                let sign =
                    (d == b'+' || d == b'-') && matches!(b[k - 1], b'e' | b'E' | b'p' | b'P');
                if sign || word(d) || d == b'.' {
                    k += 1;
                } else {
                    break;
                }
            }
        } else if c == b'"' || c == b'\'' {
            k += 1;
            loop {
                match b.get(k)? {
                    b'\\' => k += 2,
                    d if *d == c => {
                        k += 1;
                        break;
                    }
                    _ => k += 1,
                }
            }
        } else {
            k += line[k..].chars().next().map_or(1, char::len_utf8);
        }
        out.push(Token {
            at: start,
            text: line[start..k].to_string(),
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn macros() -> Macros {
        Macros::parse(
            "#define N 256\n#define M (N)\n#define LEN_2D 256\n#define TWICE(x) (2*(x))\n\
             #define HALF N/2\n#define __STDC__ 1\n",
        )
    }

    #[test]
    fn literals_spelled_as_macros_get_their_names() {
        let m = macros();
        let pp = "  for (i = 0; i < 256; i++) a[i][256 - 1] = 256;";
        let src = "  for (i = 0; i < N; i++) a[i][LEN_2D - 1] = 256; /* N */";
        let names = m.literal_names(src, pp);
        let at = |s: &str, n: usize| pp.match_indices(s).nth(n).unwrap().0;
        assert_eq!(
            names,
            vec![
                (at("256", 0), "N".to_string()),
                (at("256", 1), "LEN_2D".to_string())
            ]
        );
        // Parentheses around the body keep the name on the literal.
        assert_eq!(
            m.literal_names("x < M", "x < (256)"),
            vec![(5, "M".to_string())]
        );
    }

    #[test]
    fn expansions_that_are_not_one_literal_or_do_not_match_give_no_names() {
        let m = macros();
        assert!(m.literal_names("i < HALF", "i < 256/2").is_empty());
        assert!(m.literal_names("i < TWICE(N)", "i < (2*(256))").is_empty());
        assert!(m.literal_names("i < N", "i < 512").is_empty());
        assert!(m.literal_names("i < N /* open", "i < 256").is_empty());
    }
}
