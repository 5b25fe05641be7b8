//! The player's web app on its own listener (`web_listen`): the bundle built from `web/`
//! (committed in `web/dist`, embedded at compile time, so serving needs no Node; or read
//! once at start from `web_dir`, for working on the app without rebuilding the server),
//! and the game service over gRPC-Web on the same origin, so the page needs no CORS and no
//! address to be configured.
//!
//! Caching and compression: the script and the stylesheet are served under names that
//! carry a hash of their content (`/assets/app.<hash>.js`), cached by browsers as
//! immutable; the page that names them is revalidated on every visit with an ETag (a
//! `304` when unchanged). Each file goes out as the build compressed it (brotli or gzip,
//! the first the request's `Accept-Encoding` allows, `web/build.mjs` makes both), or as
//! is.
//!
//! Limits here: the game service is the same one as on the gRPC listener (message size,
//! per-client quotas keyed by the peer's address, calls timed in
//! `weiqi_rpc_duration_seconds` as on the gRPC port); static files are a few fixed,
//! in-memory answers. The listener does not cap its connections as the gRPC one does:
//! put a proxy in front of it when it faces the internet.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use tonic::transport::server::TcpConnectInfo;

/// The page may call another service with `?api=ORIGIN`, hence `connect-src` beyond self.
const CSP: &str = "default-src 'self'; connect-src 'self' http: https:; img-src 'self' data: blob:; \
                   style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// How long browsers keep a file whose name carries its hash: a year, never revalidated.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The files of the bundle, as `web/dist` holds them: name, content type, and whether the
/// build also wrote `.br` and `.gz` versions.
const FILES: [(&str, &str, bool); 4] = [
    ("index.html", "text/html; charset=utf-8", false),
    ("app.js", "text/javascript; charset=utf-8", true),
    ("app.css", "text/css; charset=utf-8", true),
    ("favicon.svg", "image/svg+xml", false),
];

/// One file compiled into the binary: name, body, brotli, gzip (empty when not made).
type EmbeddedFile = (&'static str, &'static [u8], &'static [u8], &'static [u8]);

/// The bundle compiled into the binary.
const EMBEDDED: [EmbeddedFile; 4] = [
    ("index.html", include_bytes!("../../../web/dist/index.html"), b"", b""),
    (
        "app.js",
        include_bytes!("../../../web/dist/app.js"),
        include_bytes!("../../../web/dist/app.js.br"),
        include_bytes!("../../../web/dist/app.js.gz"),
    ),
    (
        "app.css",
        include_bytes!("../../../web/dist/app.css"),
        include_bytes!("../../../web/dist/app.css.br"),
        include_bytes!("../../../web/dist/app.css.gz"),
    ),
    ("favicon.svg", include_bytes!("../../../web/dist/favicon.svg"), b"", b""),
];

/// One file, ready to send.
#[derive(Debug)]
struct Asset {
    body: Bytes,
    brotli: Option<Bytes>,
    gzip: Option<Bytes>,
    content_type: &'static str,
    /// A strong validator: the content's hash, quoted.
    etag: String,
    cache: &'static str,
}

impl Asset {
    fn new(
        body: Bytes,
        brotli: Option<Bytes>,
        gzip: Option<Bytes>,
        content_type: &'static str,
        cache: &'static str,
    ) -> Asset {
        Asset {
            etag: format!("\"{}\"", content_hash(&body)),
            body,
            brotli,
            gzip,
            content_type,
            cache,
        }
    }
}

/// The first 16 hex digits of the content's SHA-256: a name that changes with the content.
fn content_hash(body: &[u8]) -> String {
    hex::encode(&Sha256::digest(body)[..8])
}

/// Why the bundle could not be read from `web_dir`.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("web_dir {dir}: cannot read {file}: {source}")]
    Read {
        dir: String,
        file: &'static str,
        source: std::io::Error,
    },
}

/// The bundle's answers by request path.
#[derive(Debug)]
pub struct Bundle {
    by_path: HashMap<String, Asset>,
}

impl Bundle {
    /// The bundle compiled into the binary.
    pub fn embedded() -> Bundle {
        let some = |b: &'static [u8]| (!b.is_empty()).then(|| Bytes::from_static(b));
        Bundle::from_files(
            EMBEDDED
                .iter()
                .map(|(name, body, br, gz)| (*name, Bytes::from_static(body), some(br), some(gz))),
        )
    }

    /// The bundle in `dir` (a `web/dist` built by `npm run build`), read once.
    pub fn from_dir(dir: &Path) -> Result<Bundle, BundleError> {
        let read = |file: &'static str, name: String| {
            std::fs::read(dir.join(&name))
                .map(Bytes::from)
                .map_err(|source| BundleError::Read {
                    dir: dir.display().to_string(),
                    file,
                    source,
                })
        };
        let mut files = Vec::new();
        for (name, _, compressed) in FILES {
            let body = read(name, name.to_string())?;
            let (br, gz) = if compressed {
                (
                    read(name, format!("{name}.br")).ok(),
                    read(name, format!("{name}.gz")).ok(),
                )
            } else {
                (None, None)
            };
            files.push((name, body, br, gz));
        }
        Ok(Bundle::from_files(files.into_iter()))
    }

    fn from_files(files: impl Iterator<Item = (&'static str, Bytes, Option<Bytes>, Option<Bytes>)>) -> Bundle {
        let mut by_path = HashMap::new();
        let mut index = String::new();
        let mut hashed = Vec::new();
        for (name, body, br, gz) in files {
            let content_type = FILES
                .iter()
                .find(|f| f.0 == name)
                .map_or("application/octet-stream", |f| f.1);
            match name {
                "index.html" => index = String::from_utf8_lossy(&body).into_owned(),
                "favicon.svg" => {
                    for path in ["/favicon.svg", "/favicon.ico"] {
                        let a = Asset::new(body.clone(), None, None, content_type, "public, max-age=86400");
                        by_path.insert(path.to_string(), a);
                    }
                }
                _ => {
                    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
                    let path = format!("/assets/{stem}.{}.{ext}", content_hash(&body));
                    hashed.push((name, path.trim_start_matches('/').to_string()));
                    by_path.insert(
                        path,
                        Asset::new(body.clone(), br.clone(), gz.clone(), content_type, IMMUTABLE),
                    );
                    // The plain name too, revalidated, for a page cached before the change.
                    by_path.insert(format!("/{name}"), Asset::new(body, br, gz, content_type, "no-cache"));
                }
            }
        }
        // The page names each file by its hashed path.
        for (name, path) in hashed {
            index = index
                .replace(&format!("\"{name}\""), &format!("\"{path}\""))
                .replace(&format!("\"./{name}\""), &format!("\"{path}\""));
        }
        let page = Bytes::from(index);
        for path in ["/", "/index.html"] {
            let a = Asset::new(page.clone(), None, None, "text/html; charset=utf-8", "no-cache");
            by_path.insert(path.to_string(), a);
        }
        Bundle { by_path }
    }

    /// The answer to a GET of `path`.
    fn answer(&self, path: &str, headers: &HeaderMap) -> Response {
        let Some(a) = self.by_path.get(path) else {
            return (StatusCode::NOT_FOUND, "not found").into_response();
        };
        let (body, encoding) = match preferred_encoding(headers, a) {
            Some((coding, b)) => (b.clone(), Some(coding)),
            None => (a.body.clone(), None),
        };
        // A strong validator names one representation: each coding has its own.
        let etag = match encoding {
            Some(coding) => format!("{}-{coding}\"", a.etag.trim_end_matches('"')),
            None => a.etag.clone(),
        };
        let mut r = if etag_matches(headers, &etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut r = body.into_response();
            if let Some(e) = encoding {
                r.headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
            }
            r
        };
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(a.content_type));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static(a.cache));
        if let Ok(v) = HeaderValue::from_str(&etag) {
            h.insert(header::ETAG, v);
        }
        if a.brotli.is_some() || a.gzip.is_some() {
            h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
        r
    }

    /// The hashed path the page names for `name` (`app.js`), for tests.
    pub fn hashed_path(&self, name: &str) -> Option<String> {
        let (stem, ext) = name.rsplit_once('.')?;
        let prefix = format!("/assets/{stem}.");
        self.by_path
            .keys()
            .find(|p| p.starts_with(&prefix) && p.ends_with(&format!(".{ext}")))
            .cloned()
    }
}

/// `If-None-Match` names the current version (a list, `*`, or weak forms included).
fn etag_matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == etag || t == "*")
}

/// The compressed body the request accepts: the coding with the highest q-value, brotli
/// before gzip at equal ones; a coding named with `q=0` is refused even when `*` is
/// accepted. None: the body as is.
fn preferred_encoding<'a>(headers: &HeaderMap, a: &'a Asset) -> Option<(&'static str, &'a Bytes)> {
    let accepted: Vec<(String, f32)> = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .find_map(|p| {
                    let p = p.trim();
                    let v = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q="))?;
                    v.trim().parse::<f32>().ok()
                })
                .unwrap_or(1.0);
            (coding, q)
        })
        .collect();
    // The named coding's own q-value, else the wildcard's, else not accepted.
    let q = |name: &str| {
        let named = accepted.iter().find(|(c, _)| c == name);
        let any = accepted.iter().find(|(c, _)| c == "*");
        named.or(any).map_or(0.0, |(_, q)| *q)
    };
    let candidates = [("br", a.brotli.as_ref()), ("gzip", a.gzip.as_ref())];
    candidates
        .into_iter()
        .filter_map(|(name, body)| Some((name, body?, q(name))))
        .filter(|(_, _, q)| *q > 0.0)
        .fold(None, |best: Option<(&'static str, &'a Bytes, f32)>, c| match best {
            Some(b) if b.2 >= c.2 => Some(b),
            _ => Some(c),
        })
        .map(|(name, body, _)| (name, body))
}

/// The app's routes around `grpc` (the game service's routes, already speaking gRPC-Web
/// and timed by the server's call metrics).
pub fn router(grpc: axum::Router, bundle: Bundle) -> axum::Router {
    let bundle = Arc::new(bundle);
    let files =
        get(|State(b): State<Arc<Bundle>>, req: Request| async move { b.answer(req.uri().path(), req.headers()) });
    let static_routes = axum::Router::new()
        .route("/", files.clone())
        .route("/index.html", files.clone())
        .route("/app.js", files.clone())
        .route("/app.css", files.clone())
        .route("/favicon.svg", files.clone())
        .route("/favicon.ico", files.clone())
        .route("/assets/{name}", files)
        .with_state(bundle);
    grpc.merge(static_routes)
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .layer(axum::middleware::map_request(peer_for_tonic))
}

/// Tonic reads a caller's address (per-client quotas) from `TcpConnectInfo`; axum gives
/// it as `ConnectInfo`.
async fn peer_for_tonic(mut req: Request) -> Request {
    if let Some(ConnectInfo(addr)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        req.extensions_mut().insert(TcpConnectInfo {
            local_addr: None,
            remote_addr: Some(addr),
        });
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(b: &Bundle, path: &str, headers: &[(&'static str, &str)]) -> Response {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        b.answer(path, &h)
    }

    fn header<'a>(r: &'a Response, name: &str) -> &'a str {
        r.headers().get(name).map_or("", |v| v.to_str().unwrap())
    }

    /// The embedded bundle is the app: the page loads the hashed script and stylesheet.
    #[test]
    fn the_page_names_the_hashed_files() {
        let b = Bundle::embedded();
        let js = b.hashed_path("app.js").unwrap();
        let css = b.hashed_path("app.css").unwrap();
        let page = b.by_path.get("/").unwrap();
        let index = std::str::from_utf8(&page.body).unwrap();
        assert!(index.contains(&format!("\"{}\"", &js[1..])), "{index}");
        assert!(index.contains(&format!("\"{}\"", &css[1..])), "{index}");
        assert!(b.by_path[&js].body.len() > 10_000, "app.js is the built bundle");
        assert_eq!(header(&get(&b, &js, &[]), "cache-control"), IMMUTABLE);
        assert_eq!(header(&get(&b, "/", &[]), "cache-control"), "no-cache");
        assert_eq!(
            get(&b, "/assets/app.0000000000000000.js", &[]).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(get(&b, "/favicon.ico", &[]).status(), StatusCode::OK);
        assert_eq!(header(&get(&b, "/favicon.ico", &[]), "content-type"), "image/svg+xml");
    }

    #[test]
    fn compression_follows_accept_encoding() {
        let b = Bundle::embedded();
        let js = b.hashed_path("app.js").unwrap();
        let plain = get(&b, &js, &[]);
        assert_eq!(header(&plain, "content-encoding"), "");
        assert_eq!(header(&plain, "vary"), "accept-encoding");
        let br = get(&b, &js, &[("accept-encoding", "gzip, deflate, br, zstd")]);
        assert_eq!(header(&br, "content-encoding"), "br");
        let gz = get(&b, &js, &[("accept-encoding", "gzip;q=1.0, br;q=0")]);
        assert_eq!(header(&gz, "content-encoding"), "gzip");
        let none = get(&b, &js, &[("accept-encoding", "identity")]);
        assert_eq!(header(&none, "content-encoding"), "");
        // q-values: the higher wins; an explicit refusal beats the wildcard.
        let gz = get(&b, &js, &[("accept-encoding", "gzip;q=1, br;q=0.1")]);
        assert_eq!(header(&gz, "content-encoding"), "gzip");
        let gz = get(&b, &js, &[("accept-encoding", "br;q=0, *")]);
        assert_eq!(header(&gz, "content-encoding"), "gzip");
        let br = get(&b, &js, &[("accept-encoding", "*;Q=0.5")]);
        assert_eq!(header(&br, "content-encoding"), "br");
        // Each coding is its own representation, with its own validator.
        let tags = [header(&plain, "etag"), header(&br, "etag"), header(&gz, "etag")];
        assert!(
            tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2],
            "{tags:?}"
        );
        let again = get(&b, &js, &[("accept-encoding", "br"), ("if-none-match", tags[1])]);
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        // The compressed files are a fraction of the script, and are the script (CI also
        // rebuilds web/dist and fails if it differs from what is committed).
        let a = &b.by_path[&js];
        assert!(a.brotli.as_ref().unwrap().len() * 3 < a.body.len());
        let gzip = a.gzip.as_ref().unwrap();
        assert!(gzip.len() * 3 < a.body.len());
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzip[..]), &mut unzipped).unwrap();
        assert!(unzipped == a.body, "app.js.gz is not app.js: rebuild web/dist");
    }

    #[test]
    fn the_page_is_revalidated_with_its_etag() {
        let b = Bundle::embedded();
        let first = get(&b, "/", &[]);
        let etag = header(&first, "etag").to_string();
        assert!(etag.starts_with('"') && etag.len() == 18, "{etag}");
        assert_eq!(
            get(&b, "/", &[("if-none-match", &etag)]).status(),
            StatusCode::NOT_MODIFIED
        );
        assert_eq!(
            get(&b, "/", &[("if-none-match", &format!("\"x\", W/{etag}"))]).status(),
            StatusCode::NOT_MODIFIED
        );
        assert_eq!(get(&b, "/", &[("if-none-match", "\"other\"")]).status(), StatusCode::OK);
    }

    #[test]
    fn a_folder_serves_the_same_bundle() {
        // The embedded files written out as a build leaves them.
        let dir = std::env::temp_dir().join(format!("weiqi-web-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, body, br, gz) in EMBEDDED {
            std::fs::write(dir.join(name), body).unwrap();
            if !br.is_empty() {
                std::fs::write(dir.join(format!("{name}.br")), br).unwrap();
                std::fs::write(dir.join(format!("{name}.gz")), gz).unwrap();
            }
        }
        let b = Bundle::from_dir(&dir).unwrap();
        let embedded = Bundle::embedded();
        for name in ["app.js", "app.css"] {
            let path = b.hashed_path(name).unwrap();
            assert_eq!(Some(&path), embedded.hashed_path(name).as_ref());
            assert_eq!(b.by_path[&path].brotli, embedded.by_path[&path].brotli);
        }
        assert_eq!(b.by_path["/"].body, embedded.by_path["/"].body);
        std::fs::remove_dir_all(&dir).unwrap();
        let missing = Bundle::from_dir(Path::new("/nonexistent")).unwrap_err();
        assert!(missing.to_string().contains("index.html"), "{missing}");
    }
}
