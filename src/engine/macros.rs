//! Macros shared by the engine's modules (a leaf: it depends on nothing).

/// Declares a fieldless enum whose variants carry explicit discriminants, together with `ALL`
/// (every variant, in declaration order) and `from_discriminant`, so the variants are listed once.
macro_rules! listed_enum {
    (
        $(#[$attr:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vattr:meta])* $variant:ident = $value:expr),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis enum $name {
            $($(#[$vattr])* $variant = $value),+
        }

        #[allow(dead_code)]
        impl $name {
            /// Every variant, in declaration order.
            pub(crate) const ALL: [$name; [$(stringify!($variant)),+].len()] =
                [$($name::$variant),+];

            /// The variant whose discriminant is `value`.
            pub(crate) fn from_discriminant(value: i64) -> Option<$name> {
                Self::ALL.into_iter().find(|v| *v as i64 == value)
            }
        }
    };
}
pub(crate) use listed_enum;
