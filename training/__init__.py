"""Training Tsuzuri's kana-kanji conversion model: data preparation, the PyTorch model, training, export."""
