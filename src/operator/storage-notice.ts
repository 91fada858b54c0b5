import type { Config } from '../config.js';

/**
 * The one start-up line for a service whose delivery files and plugin packages cannot work: no private storage is
 * configured (STORAGE_DRIVER=none, the default with DATABASE_URL, because a local directory is right for one instance
 * only). Without it those routes answer 503 and nothing in the log would say why.
 */
export function storageNotice(storage: Config['storage']): string | null {
  if (storage.driver !== 'none') return null;
  return (
    'Private storage is off (STORAGE_DRIVER=none, the default with DATABASE_URL): delivery-file uploads and links and plugin packages ' +
    'answer 503 PRIVATE_PACKAGE_STORAGE_REQUIRED. Set STORAGE_DRIVER=s3 and STORAGE_S3_BUCKET (any number of instances), ' +
    'or STORAGE_DRIVER=local and STORAGE_DIR (one instance).'
  );
}
