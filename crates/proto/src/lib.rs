//! Generated code for the `weiqi.v1` gRPC API (source of truth: `proto/weiqi/v1/*.proto`),
//! its file descriptor set (for server reflection), and the published retry policy its
//! clients follow ([`retry`]). Nothing else lives here.

#![allow(clippy::all, missing_docs)]

pub mod v1 {
    tonic::include_proto!("weiqi.v1");
}

pub mod retry;

/// Encoded `FileDescriptorSet` of the API, for `tonic-reflection`.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("weiqi_descriptor");
