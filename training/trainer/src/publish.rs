//! Checkpoints into a directory or an object store, next to the self-play they came from
//! (`gen=<n>/model.safetensors`).

use std::path::Path;

use weiqi_selfplay::Objects;

use crate::Error;

/// Copies the checkpoint `model` (`X.safetensors`, its shape in `X.json`, and its training
/// curve `X.csv` when there is one) to `to`, a `.safetensors` name in a directory,
/// `file://` or `s3://` prefix, create-only: a generation's model is written once, and an
/// identical copy already there is kept. Returns the names written.
pub fn publish(model: &Path, to: &str) -> Result<Vec<String>, Error> {
    let Some(stem) = to.strip_suffix(".safetensors") else {
        return Err(Error::Invalid(format!(
            "{to}: a checkpoint's name ends in .safetensors"
        )));
    };
    let (dir, name) = stem.rsplit_once('/').unwrap_or((".", stem));
    let store = Objects::open(dir)?;
    let mut written = Vec::new();
    for ext in ["safetensors", "json", "csv"] {
        let local = model.with_extension(ext);
        if ext == "csv" && !local.exists() {
            continue;
        }
        let key = format!("{name}.{ext}");
        store.put_new(&key, std::fs::read(&local)?)?;
        written.push(store.name(&key));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_is_published_once() {
        let dir = std::env::temp_dir().join(format!("weiqi-publish-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("local")).unwrap();
        let model = dir.join("local/m.safetensors");
        std::fs::write(&model, b"weights").unwrap();
        std::fs::write(model.with_extension("json"), b"{}").unwrap();
        let to = format!("{}/gen=1/model.safetensors", dir.display());
        let names = publish(&model, &to).unwrap();
        assert_eq!(names.len(), 2);
        assert_eq!(std::fs::read(dir.join("gen=1/model.safetensors")).unwrap(), b"weights");
        assert_eq!(std::fs::read(dir.join("gen=1/model.json")).unwrap(), b"{}");
        // The same bytes again are fine; other bytes under the name are refused.
        publish(&model, &to).unwrap();
        std::fs::write(&model, b"other weights").unwrap();
        let err = publish(&model, &to).unwrap_err().to_string();
        assert!(
            err.contains("gen=1/model.safetensors") && err.contains("already exists"),
            "{err}"
        );
        assert!(publish(&model, "x.bin").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
