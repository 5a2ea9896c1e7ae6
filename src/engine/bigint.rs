//! Decimal <-> 64-bit word conversion for bigints crossing between Node and QuickJS.

/// Little-endian 64-bit words of the magnitude, and the sign, from decimal digits ("-123").
pub fn decimal_to_words(text: &str) -> Option<(bool, Vec<u64>)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut words: Vec<u64> = vec![0];
    for b in digits.bytes() {
        let mut carry = (b - b'0') as u128;
        for w in words.iter_mut() {
            let v = (*w as u128) * 10 + carry;
            *w = v as u64;
            carry = v >> 64;
        }
        if carry > 0 {
            words.push(carry as u64);
        }
    }
    while words.len() > 1 && words.last() == Some(&0) {
        words.pop();
    }
    Some((negative, words))
}

/// Decimal digits from a sign and little-endian 64-bit words.
pub fn words_to_decimal(negative: bool, words: &[u64]) -> String {
    let mut w: Vec<u64> = words.to_vec();
    while w.len() > 1 && w.last() == Some(&0) {
        w.pop();
    }
    if w.iter().all(|x| *x == 0) {
        return "0".into();
    }
    const CHUNK: u64 = 10_000_000_000_000_000_000; // 10^19
    let mut chunks: Vec<u64> = Vec::new();
    while !(w.len() == 1 && w[0] == 0) {
        let mut rem: u128 = 0;
        for x in w.iter_mut().rev() {
            let cur = (rem << 64) | (*x as u128);
            *x = (cur / CHUNK as u128) as u64;
            rem = cur % CHUNK as u128;
        }
        chunks.push(rem as u64);
        while w.len() > 1 && w.last() == Some(&0) {
            w.pop();
        }
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let mut iter = chunks.iter().rev();
    if let Some(first) = iter.next() {
        out.push_str(&first.to_string());
    }
    for c in iter {
        out.push_str(&format!("{c:019}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_big_values() {
        for s in [
            "0",
            "1",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "-1180591620717411303424",
            "123456789012345678901234567890123456789",
        ] {
            let (neg, words) = decimal_to_words(s).unwrap();
            assert_eq!(words_to_decimal(neg, &words), s);
        }
        assert_eq!(
            decimal_to_words("18446744073709551616").unwrap().1,
            vec![0, 1]
        );
        assert!(decimal_to_words("12a").is_none());
        assert!(decimal_to_words("-").is_none());
    }
}
