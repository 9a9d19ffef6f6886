// HealthPayload: placeholder until its issue lands.
