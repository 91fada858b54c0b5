import { notifications } from '@mantine/notifications';

/** A short confirmation in the corner (announced politely); its close button is named for screen readers. */
export function notify(message: string, color?: 'green' | 'red' | 'blue'): void {
  notifications.show({ message, ...(color ? { color } : {}), closeButtonProps: { 'aria-label': 'Dismiss the notification' } });
}
