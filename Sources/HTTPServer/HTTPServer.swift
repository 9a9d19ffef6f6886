// HTTPServer: placeholder until its issue lands.
