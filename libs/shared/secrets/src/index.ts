export * from './aes-gcm-cipher';
export * from './opened-secrets';
