//! Entry point of the algorithm {{ALGO_OWNER}}/{{ALGO_NAME}}.
//!
//! The runner calls `apply` for every request. Text input arrives as
//! `Value::String`, JSON input as the parsed value. Return `Value::String` for a
//! text result, any other `Value` for a JSON result, or `Err(message)` to report
//! an error. For one-time set-up, use a `std::sync::OnceLock` static.

use serde_json::Value;

pub fn apply(input: Value) -> Result<Value, String> {
    match input {
        Value::String(name) => Ok(Value::String(format!("hello {}", name))),
        other => Err(format!("Expected a string, got {}", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn says_hello() {
        assert_eq!(apply(json!("world")), Ok(json!("hello world")));
        assert!(apply(json!(42)).is_err());
    }
}
