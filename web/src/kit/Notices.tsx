import '@mantine/notifications/styles.css';
import { Notifications } from '@mantine/notifications';

/** Short confirmations ("Referral link copied"), announced politely; apps that show them render this once. */
export function Notices() {
  return <Notifications position="top-right" />;
}
