setup
