export * from './aes-gcm-cipher';
