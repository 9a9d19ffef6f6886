// Receiver: placeholder until its issue lands.
