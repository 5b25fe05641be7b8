//! Generated code for the `weiqi.v1` gRPC API (source of truth: `proto/weiqi/v1/*.proto`)
//! and its file descriptor set (for server reflection). Nothing else lives here.

#![allow(clippy::all, missing_docs)]

pub mod v1 {
    tonic::include_proto!("weiqi.v1");
}

/// Encoded `FileDescriptorSet` of the API, for `tonic-reflection`.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("weiqi_descriptor");
