//! Bigints cross between Node and QuickJS as a sign and little-endian 64-bit words (Node's
//! N-API form); QuickJS reads and writes them as hexadecimal text, which converts in linear time.

/// Little-endian 64-bit words of the magnitude, and the sign, from hexadecimal digits with an
/// optional leading '-' (as `BigInt.prototype.toString(16)` writes them). High zero words are
/// dropped; zero is no words.
pub fn hex_to_words(text: &str) -> Option<(bool, Vec<u64>)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = Vec::with_capacity(digits.len().div_ceil(16));
    let bytes = digits.as_bytes();
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(16);
        // ASCII hex digits only (checked above), so the slice is valid UTF-8 and parses.
        let chunk = std::str::from_utf8(&bytes[start..end]).ok()?;
        words.push(u64::from_str_radix(chunk, 16).ok()?);
        end = start;
    }
    trim(&mut words);
    let negative = negative && !words.is_empty();
    Some((negative, words))
}

/// Lowercase hexadecimal digits of a magnitude ("0" for zero), without a sign or prefix.
pub fn words_to_hex(words: &[u64]) -> String {
    let mut top = words.len();
    while top > 0 && words[top - 1] == 0 {
        top -= 1;
    }
    if top == 0 {
        return "0".into();
    }
    let mut out = format!("{:x}", words[top - 1]);
    for w in words[..top - 1].iter().rev() {
        out.push_str(&format!("{w:016x}"));
    }
    out
}

/// The two's complement of a magnitude over one more word than it has: read as a signed
/// integer of `64 * (len + 1)` bits, it is the negated value (QuickJS parses no signed hex).
pub fn negated_words(words: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = words.iter().map(|w| !w).collect();
    out.push(u64::MAX);
    for w in out.iter_mut() {
        let (sum, carry) = w.overflowing_add(1);
        *w = sum;
        if !carry {
            break;
        }
    }
    out
}

fn trim(words: &mut Vec<u64>) {
    while words.last() == Some(&0) {
        words.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        for s in [
            "0",
            "1",
            "-1",
            "ffffffffffffffff",
            "10000000000000000",
            "-400000000000000000",
            "123456789abcdef0123456789abcdef",
        ] {
            let (neg, words) = hex_to_words(s).unwrap();
            let back = format!("{}{}", if neg { "-" } else { "" }, words_to_hex(&words));
            assert_eq!(back, s);
        }
        assert_eq!(hex_to_words("10000000000000000").unwrap().1, vec![0, 1]);
        assert_eq!(hex_to_words("-0").unwrap(), (false, vec![]));
        assert_eq!(hex_to_words("000").unwrap(), (false, vec![]));
        assert!(hex_to_words("12g").is_none());
        assert!(hex_to_words("-").is_none());
        assert!(hex_to_words("").is_none());
        assert!(hex_to_words("+1").is_none());
    }

    #[test]
    fn negation_is_twos_complement_one_word_wider() {
        assert_eq!(negated_words(&[1]), vec![u64::MAX, u64::MAX]);
        assert_eq!(negated_words(&[0, 1]), vec![0, u64::MAX, u64::MAX]);
        assert_eq!(negated_words(&[5, 0]), vec![!4, u64::MAX, u64::MAX]);
    }
}
