/** The structured logger (pino): JSON lines, secrets redacted by path as a second line of defence. */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: pino.LevelWithSilent, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          'key',
          'secret',
          // The console's credentials: passwords, session cookies, redemption codes.
          'password',
          'passwordHash',
          'req.headers.cookie',
          'headers.cookie',
          'cookie',
          'redemptionCode',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
