// Verifies webhook deliveries with the official Standard Webhooks library.
// stdin: a JSON list of {secret, headers, body} (body in base64, as received);
// stdout: a JSON list, per delivery, null if it verified or the error's message.
import { Webhook } from "standardwebhooks";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = cases.map(({ secret, headers, body }) => {
  try {
    new Webhook(secret).verify(Buffer.from(body, "base64"), headers);
    return null;
  } catch (error) {
    return String(error.message);
  }
});
process.stdout.write(JSON.stringify(results));
