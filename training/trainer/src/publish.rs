//! Checkpoints into a directory or an object store, next to the self-play they came from
//! (`gen=<n>/model.safetensors`).

use std::path::Path;

use weiqi_selfplay::Objects;

use crate::Error;

/// Copies the checkpoint `model` (`X.safetensors`, its shape in `X.json`, and its training
/// curve `X.csv` when there is one) to `to`, a `.safetensors` name in a directory,
/// `file://` or `s3://` prefix. The weights go last and create-only, so their presence
/// means the checkpoint is complete and a generation's model is written once (the same
/// bytes again are accepted, so a retried publish succeeds); the shape is create-only too,
/// the curve (wall-clock times in it) is replaced. Returns the names written.
pub fn publish(model: &Path, to: &str) -> Result<Vec<String>, Error> {
    let Some(stem) = to.strip_suffix(".safetensors") else {
        return Err(Error::Invalid(format!(
            "{to}: a checkpoint's name ends in .safetensors"
        )));
    };
    let (dir, name) = stem.rsplit_once('/').unwrap_or((".", stem));
    let store = Objects::open(dir)?;
    let read = |ext: &str| {
        let local = model.with_extension(ext);
        std::fs::read(&local).map_err(|e| Error::Invalid(format!("{}: {e}", local.display())))
    };
    let mut written = Vec::new();
    let json = format!("{name}.json");
    store.put_new(&json, read("json")?)?;
    written.push(store.name(&json));
    if model.with_extension("csv").exists() {
        let csv = format!("{name}.csv");
        store.put(&csv, read("csv")?)?;
        written.push(store.name(&csv));
    }
    let weights = format!("{name}.safetensors");
    store.put_new(&weights, read("safetensors")?)?;
    written.push(store.name(&weights));
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
        std::fs::write(model.with_extension("csv"), b"step,seconds").unwrap();
        assert_eq!(
            publish(&model, &to).unwrap().len(),
            3,
            "the curve is published when there is one"
        );
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
