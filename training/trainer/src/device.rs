//! Where a network runs: `cpu` (the default, and what CI runs) or `cuda` / `cuda:N` with
//! libtorch's CUDA build (PyPI's `torch` wheel is one). A device that libtorch cannot see
//! is refused up front, by name, rather than failing on the first tensor.

use tch::Device;

use crate::Error;

/// Parses `--device`: `cpu`, `cuda` (the first GPU) or `cuda:N`.
pub fn parse(spec: &str) -> Result<Device, Error> {
    let spec = spec.trim().to_ascii_lowercase();
    let index = match spec.as_str() {
        "cpu" => return Ok(Device::Cpu),
        "cuda" => 0,
        s => match s.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(n)) => n,
            _ => {
                return Err(Error::Invalid(format!(
                    "--device {spec:?}: expected cpu, cuda or cuda:N"
                )));
            }
        },
    };
    let count = tch::Cuda::device_count().max(0) as usize;
    if index >= count {
        return Err(Error::Invalid(format!(
            "--device {spec}: libtorch sees {count} CUDA device(s) (a GPU, its driver and a CUDA build of libtorch are needed; --device cpu runs anywhere)"
        )));
    }
    // Fixed shapes: let cuDNN pick its fastest convolutions once.
    tch::Cuda::cudnn_set_benchmark(true);
    Ok(Device::Cuda(index))
}

/// The device the tests run on: `WEIQI_TEST_DEVICE` (e.g. `cuda` on a GPU machine), CPU by
/// default.
pub fn for_tests() -> Device {
    std::env::var("WEIQI_TEST_DEVICE").map_or(Device::Cpu, |s| {
        parse(&s).unwrap_or_else(|e| panic!("WEIQI_TEST_DEVICE: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_always_there() {
        assert_eq!(parse("cpu").unwrap(), Device::Cpu);
        assert_eq!(parse(" CPU ").unwrap(), Device::Cpu);
    }

    #[test]
    fn unknown_devices_are_refused_by_name() {
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1", "mps", ""] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("expected cpu, cuda or cuda:N"), "{bad}: {e}");
        }
    }

    #[test]
    fn cuda_is_refused_unless_libtorch_sees_a_gpu() {
        let count = tch::Cuda::device_count();
        match parse("cuda") {
            Ok(d) => assert!(count > 0 && d == Device::Cuda(0)),
            Err(e) => {
                assert_eq!(count, 0);
                assert!(e.to_string().contains("libtorch sees 0 CUDA device(s)"), "{e}");
            }
        }
        // One past the last GPU is refused wherever this runs.
        let past = format!("cuda:{}", count.max(0));
        assert!(parse(&past).unwrap_err().to_string().contains("CUDA device(s)"));
    }
}
