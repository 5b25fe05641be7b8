//! Who a caller is: `authorization: Bearer <credential>`, where the credential is a JWT
//! from the platform embedding the service (verified against the configured keys: an
//! HS256 secret, RS256/ES256 public keys in PEM, or a JWKS file; issuer, audience,
//! expiry and not-before checked; `sub` is the player id) or a guest token (random, only
//! its SHA-256 stored). Guest ids start with `guest:`; platform ids may not.

use std::path::PathBuf;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde::Deserialize;
use weiqi_players::PlayerRecord;
use weiqi_store::PlayerStore;

use crate::auth;

/// `[identity]` in the configuration file (`WEIQI__IDENTITY__JWT_ISSUER=...`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IdentityConfig {
    /// HS256 shared secret (as text); empty: none.
    pub jwt_hs256_secret: String,
    /// PEM files of RS256 or ES256 public keys (the PEM's type decides which).
    pub jwt_public_key_files: Vec<PathBuf>,
    /// A JWKS file (RS256 and ES256 keys, by `kid`).
    pub jwt_jwks_file: Option<PathBuf>,
    /// Required `iss`; empty: not checked.
    pub jwt_issuer: String,
    /// Required `aud`; empty: not checked.
    pub jwt_audience: String,
    /// The claim with the display name (default `name`; `sub` when absent).
    pub jwt_name_claim: String,
    /// A boolean claim that marks a bot account (default `bot`).
    pub jwt_bot_claim: String,
    /// Player ids that are bots whatever their credential says.
    pub bot_players: Vec<String>,
}

/// Why a credential was refused: the reason in the UNAUTHENTICATED status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("this call needs a player's credential (authorization: Bearer <guest token or JWT>)")]
    Missing,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet (nbf)")]
    NotYetValid,
    #[error("the token's issuer is not accepted")]
    WrongIssuer,
    #[error("the token's audience is not this service")]
    WrongAudience,
    #[error("the token's signature does not verify")]
    BadSignature,
    #[error("the token's algorithm is not accepted ({0})")]
    Algorithm(String),
    #[error("no configured key has the token's key id")]
    UnknownKey,
    #[error("this server accepts no platform tokens (no JWT keys configured)")]
    NoKeys,
    #[error("the token is malformed: {0}")]
    Malformed(String),
    #[error("no guest has this token")]
    UnknownGuest,
}

impl IdentityError {
    /// The machine-readable reason (ErrorInfo).
    pub fn reason(&self) -> &'static str {
        match self {
            IdentityError::Missing => "credential_missing",
            IdentityError::Expired => "token_expired",
            IdentityError::NotYetValid => "token_not_yet_valid",
            IdentityError::WrongIssuer => "wrong_issuer",
            IdentityError::WrongAudience => "wrong_audience",
            IdentityError::BadSignature => "bad_signature",
            IdentityError::Algorithm(_) => "algorithm_not_accepted",
            IdentityError::UnknownKey => "unknown_key",
            IdentityError::NoKeys => "jwt_not_configured",
            IdentityError::Malformed(_) => "malformed_token",
            IdentityError::UnknownGuest => "unknown_guest",
        }
    }
}

struct Key {
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

/// Verifies credentials.
pub struct Identity {
    keys: Vec<Key>,
    cfg: IdentityConfig,
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// Guest ids: `guest:` and 16 hex digits.
pub const GUEST_PREFIX: &str = "guest:";

impl Identity {
    pub fn new(cfg: &IdentityConfig) -> anyhow::Result<Identity> {
        let mut keys = Vec::new();
        if !cfg.jwt_hs256_secret.is_empty() {
            keys.push(Key {
                kid: None,
                alg: Algorithm::HS256,
                key: DecodingKey::from_secret(cfg.jwt_hs256_secret.as_bytes())?,
            });
        }
        for path in &cfg.jwt_public_key_files {
            let pem = std::fs::read(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
            let text = String::from_utf8_lossy(&pem);
            let (alg, key) = if text.contains("BEGIN RSA PUBLIC KEY") || DecodingKey::from_ec_pem(&pem).is_err() {
                (Algorithm::RS256, DecodingKey::from_rsa_pem(&pem)?)
            } else {
                (Algorithm::ES256, DecodingKey::from_ec_pem(&pem)?)
            };
            keys.push(Key { kid: None, alg, key });
        }
        if let Some(path) = &cfg.jwt_jwks_file {
            let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
            let set: JwkSet = serde_json::from_str(&text)?;
            for jwk in &set.keys {
                let alg = match &jwk.algorithm {
                    jsonwebtoken::jwk::AlgorithmParameters::RSA(_) => Algorithm::RS256,
                    jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(_) => Algorithm::ES256,
                    _ => anyhow::bail!("{}: only RSA and EC keys are accepted", path.display()),
                };
                keys.push(Key {
                    kid: jwk.common.key_id.clone(),
                    alg,
                    key: DecodingKey::from_jwk(jwk)?,
                });
            }
        }
        Ok(Identity { keys, cfg: cfg.clone() })
    }

    /// The player a JWT names, verified.
    pub fn verify_jwt(&self, token: &str, now_ms: u64) -> Result<PlayerRecord, IdentityError> {
        if self.keys.is_empty() {
            return Err(IdentityError::NoKeys);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
            // `alg: none` (and any name the library does not know) fails here.
            ErrorKind::InvalidAlgorithmName | ErrorKind::Json(_) => IdentityError::Algorithm("none or unknown".into()),
            _ => IdentityError::Malformed(e.to_string()),
        })?;
        // A key id picks among keys that have ids (a JWKS); otherwise every key is a candidate.
        let candidates: Vec<&Key> = match &header.kid {
            Some(kid) if self.keys.iter().any(|k| k.kid.is_some()) => {
                self.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).collect()
            }
            _ => self.keys.iter().collect(),
        };
        if candidates.is_empty() {
            return Err(IdentityError::UnknownKey);
        }
        let Some(key) = candidates.iter().find(|k| k.alg == header.alg) else {
            return Err(IdentityError::Algorithm(format!("{:?}", header.alg)));
        };
        let mut v = Validation::new(key.alg);
        v.leeway = 30;
        v.validate_nbf = true;
        v.set_required_spec_claims(&["exp", "sub"]);
        if !self.cfg.jwt_issuer.is_empty() {
            v.set_issuer(&[&self.cfg.jwt_issuer]);
        }
        if self.cfg.jwt_audience.is_empty() {
            v.validate_aud = false;
        } else {
            v.set_audience(&[&self.cfg.jwt_audience]);
        }
        let data = jsonwebtoken::decode::<Claims>(token, &key.key, &v).map_err(|e| match e.kind() {
            ErrorKind::ExpiredSignature => IdentityError::Expired,
            ErrorKind::ImmatureSignature => IdentityError::NotYetValid,
            ErrorKind::InvalidIssuer => IdentityError::WrongIssuer,
            ErrorKind::InvalidAudience => IdentityError::WrongAudience,
            ErrorKind::InvalidSignature => IdentityError::BadSignature,
            ErrorKind::InvalidAlgorithm => IdentityError::Algorithm(format!("{:?}", header.alg)),
            _ => IdentityError::Malformed(e.to_string()),
        })?;
        let c = data.claims;
        if c.sub.is_empty() || c.sub.len() > 128 || c.sub.starts_with(GUEST_PREFIX) {
            return Err(IdentityError::Malformed(
                "sub must be 1..128 bytes and not start with guest:".into(),
            ));
        }
        let claim = |name: &str, default: &str| {
            let n = if name.is_empty() { default } else { name };
            c.rest.get(n).cloned()
        };
        let name = claim(&self.cfg.jwt_name_claim, "name")
            .and_then(|v| v.as_str().map(clean_name))
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| c.sub.clone());
        let bot = claim(&self.cfg.jwt_bot_claim, "bot")
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
            || self.cfg.bot_players.contains(&c.sub);
        Ok(PlayerRecord {
            id: c.sub,
            name,
            bot,
            guest: false,
            created_ms: now_ms,
        })
    }

    /// The player a credential names: a JWT (three dot-separated parts) or a guest token.
    /// Platform players are recorded (or their name and bot flag refreshed) on sight.
    pub async fn resolve(
        &self,
        store: &dyn PlayerStore,
        credential: Option<&str>,
        now_ms: u64,
    ) -> Result<Result<PlayerRecord, IdentityError>, weiqi_store::StoreError> {
        let Some(token) = credential.filter(|t| !t.is_empty()) else {
            return Ok(Err(IdentityError::Missing));
        };
        if token.matches('.').count() == 2 {
            return match self.verify_jwt(token, now_ms) {
                Ok(p) => {
                    store.upsert_player(p.clone()).await?;
                    Ok(Ok(p))
                }
                Err(e) => Ok(Err(e)),
            };
        }
        let found = store.guest_by_token(auth::sha256_hex(token.as_bytes())).await?;
        Ok(found
            .map(|mut p| {
                p.bot |= self.cfg.bot_players.contains(&p.id);
                p
            })
            .ok_or(IdentityError::UnknownGuest))
    }
}

/// A display name: trimmed, control characters dropped, at most 32 characters.
pub fn clean_name(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(32)
        .collect()
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::json;

    use super::*;

    /// jsonwebtoken checks `exp` and `nbf` against the system clock.
    fn now_s() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }
    const SECRET: &str = "a shared secret for the tests";

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/jwt")
            .join(name)
    }

    fn config() -> IdentityConfig {
        IdentityConfig {
            jwt_hs256_secret: SECRET.into(),
            jwt_public_key_files: vec![fixture("ec_public.pem")],
            jwt_issuer: "https://platform.example".into(),
            jwt_audience: "weiqi".into(),
            bot_players: vec!["house-bot".into()],
            ..Default::default()
        }
    }

    fn claims(extra: serde_json::Value) -> serde_json::Value {
        let mut c = json!({
            "sub": "p-17", "name": "Ke Jie", "iss": "https://platform.example", "aud": "weiqi",
            "exp": now_s() + 3600, "nbf": now_s() - 60,
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }

    fn hs256(c: &serde_json::Value, secret: &str) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            c,
            &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
        )
        .unwrap()
    }

    fn verify(id: &Identity, token: &str) -> Result<PlayerRecord, IdentityError> {
        id.verify_jwt(token, now_s() * 1000)
    }

    #[test]
    fn a_valid_hs256_token_names_the_player() {
        let id = Identity::new(&config()).unwrap();
        let p = verify(&id, &hs256(&claims(json!({})), SECRET)).unwrap();
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.bot, p.guest),
            ("p-17", "Ke Jie", false, false)
        );
        let bot = verify(&id, &hs256(&claims(json!({"bot": true})), SECRET)).unwrap();
        assert!(bot.bot, "the bot claim marks a bot account");
        let configured = verify(&id, &hs256(&claims(json!({"sub": "house-bot"})), SECRET)).unwrap();
        assert!(configured.bot, "configured bot ids are bots");
    }

    #[test]
    fn bad_tokens_are_refused_with_their_reason() {
        let id = Identity::new(&config()).unwrap();
        let expired = hs256(&claims(json!({"exp": 1_000_000_000u64, "nbf": 900_000_000u64})), SECRET);
        assert_eq!(verify(&id, &expired), Err(IdentityError::Expired));
        let issuer = hs256(&claims(json!({"iss": "https://evil.example"})), SECRET);
        assert_eq!(verify(&id, &issuer), Err(IdentityError::WrongIssuer));
        let audience = hs256(&claims(json!({"aud": "someone-else"})), SECRET);
        assert_eq!(verify(&id, &audience), Err(IdentityError::WrongAudience));
        let forged = hs256(&claims(json!({})), "another secret");
        assert_eq!(verify(&id, &forged), Err(IdentityError::BadSignature));
        let early = hs256(&claims(json!({"nbf": now_s() + 3600, "exp": now_s() + 7200})), SECRET);
        assert_eq!(verify(&id, &early), Err(IdentityError::NotYetValid));
        let guest_like = hs256(&claims(json!({"sub": "guest:0011"})), SECRET);
        assert!(matches!(verify(&id, &guest_like), Err(IdentityError::Malformed(_))));
        // `alg: none`, unsigned.
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let none = format!(
            "{}.{}.",
            b64(br#"{"alg":"none","typ":"JWT"}"#),
            b64(claims(json!({})).to_string().as_bytes())
        );
        assert!(
            matches!(verify(&id, &none), Err(IdentityError::Algorithm(_))),
            "{:?}",
            verify(&id, &none)
        );
        // Signed with a key this server does not take for that algorithm.
        let rs = encode(
            &Header::new(Algorithm::RS256),
            &claims(json!({})),
            &EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa_private.pem")).unwrap()).unwrap(),
        )
        .unwrap();
        assert!(matches!(verify(&id, &rs), Err(IdentityError::Algorithm(_))));
    }

    #[test]
    fn es256_and_rs256_from_pem_and_jwks() {
        let id = Identity::new(&config()).unwrap();
        let ec = EncodingKey::from_ec_pem(&std::fs::read(fixture("ec_private.pem")).unwrap()).unwrap();
        let t = encode(&Header::new(Algorithm::ES256), &claims(json!({})), &ec).unwrap();
        assert_eq!(verify(&id, &t).unwrap().id, "p-17");

        let jwks = Identity::new(&IdentityConfig {
            jwt_jwks_file: Some(fixture("jwks.json")),
            ..config()
        })
        .unwrap();
        let rsa = EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa_private.pem")).unwrap()).unwrap();
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("k1".into());
        let t = encode(&header, &claims(json!({})), &rsa).unwrap();
        assert_eq!(verify(&jwks, &t).unwrap().id, "p-17");
        header.kid = Some("retired".into());
        let t = encode(&header, &claims(json!({})), &rsa).unwrap();
        assert_eq!(verify(&jwks, &t), Err(IdentityError::UnknownKey));
    }

    #[test]
    fn without_keys_no_token_verifies() {
        let id = Identity::new(&IdentityConfig::default()).unwrap();
        assert_eq!(
            verify(&id, &hs256(&claims(json!({})), SECRET)),
            Err(IdentityError::NoKeys)
        );
    }
}
