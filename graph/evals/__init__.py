"""Evaluation: the WebShop reward and harness, and the limits evaluation."""
