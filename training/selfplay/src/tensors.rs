//! Batches as `tch::Tensor`s (cargo feature `tch`): each array is copied once, from the
//! batch's contiguous ndarray buffer straight into the tensor's storage.

use tch::{Kind, Tensor};

use crate::{Batch, Batches};

/// A [`Batch`] as tensors, ready for a network: inputs as float, targets as float.
#[derive(Debug)]
pub struct TensorBatch {
    /// float [b, 17, N, N]
    pub features: Tensor,
    /// float [b, N*N+1]
    pub policy: Tensor,
    /// float [b, N*N+1], 1 where legal
    pub legal: Tensor,
    /// float [b]
    pub value: Tensor,
    /// float [b, N, N]
    pub ownership: Tensor,
    /// float [b]
    pub score: Tensor,
    /// float [b], 1 where ownership and score are a scored result
    pub scored: Tensor,
    /// int64 [b]: the opponent's reply as a policy index, -1 for none
    pub next_move: Tensor,
}

fn tensor<T: tch::kind::Element + Copy>(a: &[T], shape: &[usize]) -> Tensor {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    Tensor::from_slice(a).view(dims.as_slice())
}

impl Batch {
    /// The batch as tensors (one copy per array; integer arrays become float, the reply's
    /// index int64).
    pub fn to_tensors(&self) -> TensorBatch {
        // Batches are built contiguous (standard layout), so as_slice never fails here.
        let f = self.features.as_slice().expect("batches are contiguous");
        let o = self.ownership.as_slice().expect("batches are contiguous");
        let l = self.legal.as_slice().expect("batches are contiguous");
        TensorBatch {
            features: tensor(f, self.features.shape()).to_kind(Kind::Float),
            policy: tensor(
                self.policy.as_slice().expect("batches are contiguous"),
                self.policy.shape(),
            ),
            legal: tensor(l, self.legal.shape()).to_kind(Kind::Float),
            value: tensor(
                self.value.as_slice().expect("batches are contiguous"),
                self.value.shape(),
            ),
            ownership: tensor(o, self.ownership.shape()).to_kind(Kind::Float),
            score: tensor(
                self.score.as_slice().expect("batches are contiguous"),
                self.score.shape(),
            ),
            scored: tensor(
                self.scored.as_slice().expect("batches are contiguous"),
                self.scored.shape(),
            )
            .to_kind(Kind::Float),
            next_move: tensor(
                self.next_move.as_slice().expect("batches are contiguous"),
                self.next_move.shape(),
            )
            .to_kind(Kind::Int64),
        }
    }
}

impl TensorBatch {
    /// The batch on `device` (a copy per tensor; none when it is already there).
    pub fn to_device(&self, device: tch::Device) -> TensorBatch {
        TensorBatch {
            features: self.features.to_device(device),
            policy: self.policy.to_device(device),
            legal: self.legal.to_device(device),
            value: self.value.to_device(device),
            ownership: self.ownership.to_device(device),
            score: self.score.to_device(device),
            scored: self.scored.to_device(device),
            next_move: self.next_move.to_device(device),
        }
    }
}

impl<'a> Batches<'a> {
    /// The same shuffled, augmented batches as tensors.
    pub fn tensors(self) -> impl Iterator<Item = TensorBatch> + 'a {
        self.map(|b| b.to_tensors())
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{Array1, Array2, Array3, Array4};

    use super::*;

    #[test]
    fn tensors_keep_shapes_and_values() {
        let b = Batch {
            features: Array4::from_shape_fn((2, 17, 3, 3), |(i, c, y, x)| ((i + c + y + x) % 2) as u8),
            policy: Array2::from_shape_fn((2, 10), |(i, j)| (i * 10 + j) as f32),
            legal: Array2::ones((2, 10)),
            value: Array1::from(vec![1.0, -1.0]),
            ownership: Array3::from_shape_fn((2, 3, 3), |(i, _, _)| if i == 0 { 1 } else { -1 }),
            score: Array1::from(vec![2.5, -2.5]),
            scored: Array1::from(vec![1, 0]),
            next_move: Array1::from(vec![9, -1]),
        };
        let t = b.to_tensors();
        assert_eq!(t.features.size(), vec![2, 17, 3, 3]);
        assert_eq!(t.features.kind(), Kind::Float);
        assert_eq!(t.features.double_value(&[0, 1, 0, 0]), 1.0);
        assert_eq!(t.policy.double_value(&[1, 3]), 13.0);
        assert_eq!(t.ownership.double_value(&[1, 2, 2]), -1.0);
        assert_eq!(t.value.size(), vec![2]);
        assert_eq!(t.score.double_value(&[1]), -2.5);
        assert_eq!(t.next_move.kind(), Kind::Int64);
        assert_eq!(t.next_move.int64_value(&[1]), -1);
    }
}
