//! Text in the encodings Node's `fs` and `Buffer` accept (`utf8`, `latin1`, `ascii`, `hex`,
//! `base64`, `base64url`).

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Bytes as text in a Node encoding name (`utf8` replaces invalid sequences).
pub fn decode(bytes: &[u8], encoding: &str) -> String {
    match encoding {
        "latin1" => bytes.iter().map(|&b| b as char).collect(),
        "ascii" => bytes.iter().map(|&b| (b & 0x7f) as char).collect(),
        "hex" => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        "base64" | "base64url" => {
            let url = encoding == "base64url";
            let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
            for chunk in bytes.chunks(3) {
                let n = (u32::from(chunk[0]) << 16)
                    | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*chunk.get(2).unwrap_or(&0));
                for i in 0..=chunk.len() {
                    let c = B64[((n >> (18 - 6 * i)) & 63) as usize];
                    out.push(match (url, c) {
                        (true, b'+') => '-',
                        (true, b'/') => '_',
                        (_, c) => c as char,
                    });
                }
                if !url {
                    for _ in chunk.len()..3 {
                        out.push('=');
                    }
                }
            }
            out
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Text as bytes in a Node encoding name (lenient like Node: bad input is skipped).
pub fn encode(text: &str, encoding: &str) -> Vec<u8> {
    match encoding {
        "latin1" | "ascii" => text.chars().map(|c| (c as u32 & 0xff) as u8).collect(),
        "hex" => {
            let digits: Vec<u8> = text.bytes().collect();
            let mut out = Vec::with_capacity(digits.len() / 2);
            for pair in digits.chunks_exact(2) {
                let hi = (pair[0] as char).to_digit(16);
                let lo = (pair[1] as char).to_digit(16);
                match (hi, lo) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => break,
                }
            }
            out
        }
        "base64" | "base64url" => {
            let mut out = Vec::with_capacity(text.len() * 3 / 4);
            let (mut acc, mut bits) = (0u32, 0u32);
            for c in text.bytes() {
                let v = match c {
                    b'A'..=b'Z' => c - b'A',
                    b'a'..=b'z' => c - b'a' + 26,
                    b'0'..=b'9' => c - b'0' + 52,
                    b'+' | b'-' => 62,
                    b'/' | b'_' => 63,
                    b'=' => break,
                    _ => continue,
                };
                acc = (acc << 6) | u32::from(v);
                bits += 6;
                if bits >= 8 {
                    bits -= 8;
                    out.push((acc >> bits) as u8);
                    acc &= (1 << bits) - 1;
                }
            }
            out
        }
        _ => text.as_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        let data = b"hello, world\xff\x00";
        for enc in ["hex", "base64", "base64url", "latin1"] {
            assert_eq!(encode(&decode(data, enc), enc), data, "{enc}");
        }
        assert_eq!(decode(b"hi", "base64"), "aGk=");
        assert_eq!(decode(b"\xfb\xff", "base64url"), "-_8");
        assert_eq!(encode("aGk=", "base64"), b"hi");
        assert_eq!(encode("zz41", "hex"), b"");
        assert_eq!(decode(b"\xe2\x82", "utf8"), "\u{fffd}");
    }
}
