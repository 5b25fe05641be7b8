//! The controller's side of GTP: an engine in a child process, spoken to line by line,
//! every answer awaited with a deadline (an engine that hangs does not hang its caller).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::protocol::Reply;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("an empty engine command")]
    NoCommand,
    #[error("cannot start {command:?}: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("the engine went away (its output closed)")]
    Closed,
    #[error("the engine did not answer {command:?} within {seconds} s")]
    Timeout { command: String, seconds: f64 },
    #[error("the engine's answer is not GTP: {0:?}")]
    Malformed(String),
    #[error("writing to the engine: {0}")]
    Io(#[from] std::io::Error),
}

/// A GTP engine running as a child process.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Every command sent and answer read, in order (for logs and failure reports).
    pub transcript: Vec<String>,
}

impl Client {
    /// Starts `command_line` (a program and its arguments, split on whitespace).
    pub fn spawn(command_line: &str) -> Result<Client, ClientError> {
        let mut words = command_line.split_whitespace();
        let program = words.next().ok_or(ClientError::NoCommand)?;
        let mut child = Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| ClientError::Spawn {
                command: command_line.to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        // A reader thread, so that waiting for an answer can time out.
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Client {
            child,
            stdin,
            lines,
            transcript: Vec::new(),
        })
    }

    /// Sends one command and reads its answer, waiting at most `timeout`.
    pub fn send(&mut self, command: &str, timeout: Duration) -> Result<Reply, ClientError> {
        self.transcript.push(format!("> {command}"));
        writeln!(self.stdin, "{command}")?;
        self.stdin.flush()?;
        let deadline = Instant::now() + timeout;
        let mut answer: Vec<String> = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ClientError::Timeout {
                        command: command.to_string(),
                        seconds: timeout.as_secs_f64(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => return Err(ClientError::Closed),
            };
            let line = line.trim_end_matches('\r').to_string();
            if line.trim().is_empty() {
                if answer.is_empty() {
                    continue; // (Blank lines before an answer are noise.)
                }
                break;
            }
            self.transcript.push(format!("< {line}"));
            answer.push(line);
        }
        let first = answer[0].clone();
        let ok = match first.chars().next() {
            Some('=') => true,
            Some('?') => false,
            _ => return Err(ClientError::Malformed(answer.join("\n"))),
        };
        // The text after the mark and the (optional) id.
        answer[0] = first[1..]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start()
            .to_string();
        let text = answer.join("\n").trim().to_string();
        Ok(if ok { Reply::Ok(text) } else { Reply::Err(text) })
    }

    /// Sends a command whose failure is an error.
    pub fn expect(&mut self, command: &str, timeout: Duration) -> Result<String, ClientError> {
        match self.send(command, timeout)? {
            Reply::Ok(text) => Ok(text),
            Reply::Err(text) => Err(ClientError::Malformed(format!("{command}: ? {text}"))),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A polite quit, then the process is ended whatever it does.
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        std::thread::sleep(Duration::from_millis(20));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
