"""LLM backends: llamacpp (embedded GGUF), ollama, openai-compatible, extractive."""
