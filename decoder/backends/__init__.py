"""Where models run: model specs and loading, and the engines that hold them."""
