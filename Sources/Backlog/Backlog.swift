// Backlog: placeholder until its issue lands.
