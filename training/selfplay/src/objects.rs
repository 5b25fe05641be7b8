//! Where a run's files live: a directory or an object store, addressed by one string.
//!
//! - `DIR` or `file:///abs/DIR`: the local file system.
//! - `s3://bucket/prefix`: Amazon S3 or any S3-compatible store, through the `object_store`
//!   crate. Credentials, region and endpoint come from the environment as the AWS tools
//!   read them (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//!   `AWS_ENDPOINT_URL` or `AWS_ENDPOINT`, `AWS_ALLOW_HTTP=true` for a plain-HTTP
//!   endpoint).
//!
//! Shards and the other per-game files are written create-only ([`Objects::put_new`]: S3's
//! `If-None-Match: *`, a hard link on a file system), so two workers can never overwrite
//! each other's data; every put is whole or absent, so a killed worker leaves no partial
//! object under a shard's name. The self-play code is synchronous (rayon), so the handle
//! owns a one-thread tokio runtime and blocks on it.

use std::sync::Arc;

use object_store::path::Path as Key;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

use crate::Error;

/// A run's root in a directory or an object store, with the keys below it.
pub struct Objects {
    store: Arc<dyn ObjectStore>,
    root: Key,
    /// How the user named the root (for messages): a path or a URL, no trailing `/`.
    location: String,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Objects({})", self.location)
    }
}

/// What [`Objects::put_new`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// The object is new.
    Created,
    /// An identical object was there already (a restarted worker writing again what it
    /// wrote before it was killed).
    AlreadyThere,
}

impl Objects {
    /// Opens `location` (see the module's documentation). Nothing is read or created yet.
    pub fn open(location: &str) -> Result<Objects, Error> {
        let invalid = |why: String| Error::Invalid(format!("{location}: {why}"));
        let (store, root): (Arc<dyn ObjectStore>, Key) = match location.split_once("://") {
            Some(("s3" | "s3a", _)) => {
                let url = url::Url::parse(location).map_err(|e| invalid(e.to_string()))?;
                let s3 = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url.as_str())
                    .build()
                    .map_err(|e| invalid(e.to_string()))?;
                let root = Key::from_url_path(url.path()).map_err(|e| invalid(e.to_string()))?;
                (Arc::new(s3), root)
            }
            Some(("file", _)) => {
                let url = url::Url::parse(location).map_err(|e| invalid(e.to_string()))?;
                let dir = url
                    .to_file_path()
                    .map_err(|_| invalid("not a local absolute path".into()))?;
                local(&dir).map_err(invalid)?
            }
            Some((scheme, _)) => {
                return Err(invalid(format!(
                    "{scheme}:// is not supported (a directory, file:// or s3://)"
                )));
            }
            None => local(std::path::Path::new(location)).map_err(invalid)?,
        };
        Objects::with(store, root, location.to_string())
    }

    /// A local directory (which need not exist yet).
    pub fn dir(path: &std::path::Path) -> Result<Objects, Error> {
        let (store, root) = local(path).map_err(|why| Error::Invalid(format!("{}: {why}", path.display())))?;
        Objects::with(store, root, path.display().to_string())
    }

    fn with(store: Arc<dyn ObjectStore>, root: Key, location: String) -> Result<Objects, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("weiqi-objects")
            .enable_all()
            .build()?;
        let trimmed = location.trim_end_matches('/');
        let location = if trimmed.is_empty() {
            location.clone()
        } else {
            trimmed.to_string()
        };
        Ok(Objects {
            store,
            root,
            location,
            runtime,
        })
    }

    /// How an object below the root is named in messages: the root as given, then `rel`.
    pub fn name(&self, rel: &str) -> String {
        if rel.is_empty() {
            self.location.clone()
        } else {
            format!("{}/{rel}", self.location)
        }
    }

    fn key(&self, rel: &str) -> Key {
        rel.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.root.clone(), |k, part| k.child(part))
    }

    fn failed(&self, rel: &str, e: impl std::fmt::Display) -> Error {
        Error::Store {
            object: self.name(rel),
            why: e.to_string(),
        }
    }

    /// Writes `bytes` at `rel` unless something is there already: an identical object is
    /// [`Put::AlreadyThere`], a different one an error naming it.
    pub fn put_new(&self, rel: &str, bytes: Vec<u8>) -> Result<Put, Error> {
        let key = self.key(rel);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let payload = PutPayload::from(bytes.clone());
        match self.runtime.block_on(self.store.put_opts(&key, payload, opts)) {
            Ok(_) => Ok(Put::Created),
            Err(object_store::Error::AlreadyExists { .. }) => match self.get(rel)? {
                Some(there) if there == bytes => Ok(Put::AlreadyThere),
                _ => Err(self.failed(
                    rel,
                    "already exists with other contents (another worker's or another run's): \
                     objects are written create-only, so use another prefix",
                )),
            },
            Err(e) => Err(self.failed(rel, e)),
        }
    }

    /// Writes `bytes` at `rel`, replacing what is there (a worker's own manifest).
    pub fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<(), Error> {
        let key = self.key(rel);
        self.runtime
            .block_on(self.store.put(&key, PutPayload::from(bytes)))
            .map(|_| ())
            .map_err(|e| self.failed(rel, e))
    }

    /// The object at `rel`, or `None` when there is none.
    pub fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, Error> {
        let key = self.key(rel);
        let got = self.runtime.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map(|b| b.map(|b| b.to_vec())).map_err(|e| self.failed(rel, e))
    }

    /// Every object below the root: its key relative to the root and its size, in key
    /// order. A root that does not exist lists nothing.
    pub fn list(&self) -> Result<Vec<(String, u64)>, Error> {
        use futures_util::TryStreamExt;
        let listed = self.runtime.block_on(async {
            match self.store.list(Some(&self.root)).try_collect::<Vec<_>>().await {
                Err(object_store::Error::NotFound { .. }) => Ok(Vec::new()),
                r => r,
            }
        });
        let listed = listed.map_err(|e| self.failed("", e))?;
        let mut out: Vec<(String, u64)> = listed
            .into_iter()
            .filter_map(|meta| {
                let rel: Vec<String> = meta
                    .location
                    .prefix_match(&self.root)?
                    .map(|p| p.as_ref().to_string())
                    .collect();
                Some((rel.join("/"), meta.size))
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// The objects below `rel` as a root of their own.
    pub fn at(&self, rel: &str) -> Result<Objects, Error> {
        Objects::with(self.store.clone(), self.key(rel), self.name(rel.trim_matches('/')))
    }
}

/// A directory as an object store: `LocalFileSystem` addressed from `/`, the directory as
/// the root key (relative paths are taken from the current directory).
fn local(dir: &std::path::Path) -> Result<(Arc<dyn ObjectStore>, Key), String> {
    // `..` and `.` resolved by the path's text (an object key has no such parts).
    let mut abs = std::path::PathBuf::new();
    for part in std::path::absolute(dir).map_err(|e| e.to_string())?.components() {
        match part {
            std::path::Component::ParentDir => {
                abs.pop();
            }
            std::path::Component::CurDir => {}
            other => abs.push(other),
        }
    }
    let root = Key::from_absolute_path(&abs).map_err(|e| e.to_string())?;
    Ok((Arc::new(object_store::local::LocalFileSystem::new()), root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("weiqi-objects-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_directory_takes_new_objects_once() {
        let dir = scratch("dir");
        let o = Objects::open(dir.to_str().unwrap()).unwrap();
        assert_eq!(o.list().unwrap(), vec![]);
        assert_eq!(o.put_new("a/x.npz", b"one".to_vec()).unwrap(), Put::Created);
        assert_eq!(std::fs::read(dir.join("a/x.npz")).unwrap(), b"one");
        assert_eq!(o.put_new("a/x.npz", b"one".to_vec()).unwrap(), Put::AlreadyThere);
        let err = o.put_new("a/x.npz", b"two".to_vec()).unwrap_err().to_string();
        assert!(err.contains("a/x.npz") && err.contains("already exists"), "{err}");
        assert_eq!(std::fs::read(dir.join("a/x.npz")).unwrap(), b"one");
        o.put("m.json", b"1".to_vec()).unwrap();
        o.put("m.json", b"2".to_vec()).unwrap();
        assert_eq!(o.get("m.json").unwrap(), Some(b"2".to_vec()));
        assert_eq!(o.get("none").unwrap(), None);
        assert_eq!(o.list().unwrap(), vec![("a/x.npz".into(), 3), ("m.json".into(), 1)]);
        let sub = o.at("a").unwrap();
        assert_eq!(sub.list().unwrap(), vec![("x.npz".into(), 3)]);
        assert_eq!(sub.name("x.npz"), format!("{}/a/x.npz", dir.display()));
        let url = Objects::open(&format!("file://{}", dir.display())).unwrap();
        assert_eq!(url.get("a/x.npz").unwrap(), Some(b"one".to_vec()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn relative_paths_with_dots_name_the_same_folder() {
        let dir = scratch("dots");
        std::fs::create_dir_all(dir.join("a")).unwrap();
        let o = Objects::dir(&dir.join("a/../b/./c")).unwrap();
        o.put_new("x", b"1".to_vec()).unwrap();
        assert_eq!(std::fs::read(dir.join("b/c/x")).unwrap(), b"1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_schemes_are_refused_by_name() {
        let err = Objects::open("gs://bucket/x").unwrap_err().to_string();
        assert!(err.contains("gs://"), "{err}");
    }
}
