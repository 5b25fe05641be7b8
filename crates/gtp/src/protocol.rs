//! GTP v2 framing (section 2 of the specification): what a command line is, and how an
//! answer is written.

/// One command: its optional numeric id, its name and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub id: Option<u64>,
    pub name: String,
    pub args: Vec<String>,
}

impl Line {
    /// A command from one input line; `None` for a line with nothing to do (empty, or only
    /// a comment). Control characters other than tab and newline are dropped, tabs become
    /// spaces, and everything from `#` on is a comment (GTP 2.2).
    pub fn parse(raw: &str) -> Option<Line> {
        let cleaned: String = raw
            .chars()
            .take_while(|&c| c != '#')
            .filter(|&c| !c.is_control() || c == '\t')
            .map(|c| if c == '\t' { ' ' } else { c })
            .collect();
        let mut words = cleaned.split_whitespace();
        let first = words.next()?;
        let (id, name) = match first.parse::<u64>() {
            Ok(id) => (Some(id), words.next().unwrap_or_default()),
            Err(_) => (None, first),
        };
        Some(Line {
            id,
            name: name.to_string(),
            args: words.map(str::to_string).collect(),
        })
    }
}

/// An answer: success with its text (possibly several lines), or failure with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ok(String),
    Err(String),
}

impl Reply {
    pub fn ok(text: impl Into<String>) -> Reply {
        Reply::Ok(text.into())
    }

    pub fn err(text: impl Into<String>) -> Reply {
        Reply::Err(text.into())
    }

    /// The answer as sent: `=` or `?`, the command's id, the text, and the empty line that
    /// ends every answer. (The text never holds an empty line: that would end it early.)
    pub fn format(&self, id: Option<u64>) -> String {
        let (mark, text) = match self {
            Reply::Ok(t) => ('=', t),
            Reply::Err(t) => ('?', t),
        };
        let id = id.map(|i| i.to_string()).unwrap_or_default();
        let body: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let sep = if body.is_empty() { "" } else { " " };
        format!("{mark}{id}{sep}{}\n\n", body.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_ids_comments_and_control_characters() {
        assert_eq!(Line::parse(""), None);
        assert_eq!(Line::parse("   # only a comment"), None);
        let l = Line::parse("12 play\tblack D4 # a move\r").unwrap();
        assert_eq!(
            (l.id, l.name.as_str(), l.args.clone()),
            (Some(12), "play", vec!["black".into(), "D4".into()])
        );
        let l = Line::parse("genm\u{7}ove white").unwrap();
        assert_eq!((l.id, l.name.as_str()), (None, "genmove"));
    }

    #[test]
    fn answers_end_with_an_empty_line_and_echo_the_id() {
        assert_eq!(Reply::ok("").format(None), "=\n\n");
        assert_eq!(Reply::ok("2").format(Some(7)), "=7 2\n\n");
        assert_eq!(Reply::err("illegal move").format(Some(3)), "?3 illegal move\n\n");
        assert_eq!(Reply::ok("a\n\nb").format(None), "= a\nb\n\n");
    }
}
